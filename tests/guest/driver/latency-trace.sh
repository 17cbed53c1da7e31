#!/bin/sh
# Trace where a null job's time goes (Documentation/accel/vnpu/latency.rst).
# Runs in the guest: enables the scheduler, fence, IRQ, wake-up and
# workqueue tracepoints plus kprobes on the driver, runs npu-bench's
# latency part (null jobs, then the raw_rtt probe), and prints the trace
# between VNPU-TRACE-BEGIN/END for tests/guest/driver/latency-trace.py.
# Not a test (no t- or b- prefix): run it by name, see latency.rst.
set -e
T=/sys/kernel/tracing
N=${VNPU_TRACE_ITERS:-200}

mountpoint -q $T || mount -t tracefs tracefs $T
echo 0 > $T/tracing_on
echo > $T/trace
echo mono > $T/trace_clock
echo 16384 > $T/buffer_size_kb

# The driver's own stages: run_job (entry: the scheduler's worker got to
# it; return: the doorbell was written), the queue interrupt, the raw
# probe's submit.
echo 'p:vnpuk/run_job vnpu:vnpu_job_run' > $T/kprobe_events
echo 'r:vnpuk/run_job_ret vnpu:vnpu_job_run' >> $T/kprobe_events
echo 'p:vnpuk/raw_submit vnpu:vnpu_queue_raw_submit' >> $T/kprobe_events
echo 'r:vnpuk/raw_submit_ret vnpu:vnpu_queue_raw_submit' >> $T/kprobe_events
echo 'p:vnpuk/qcomplete vnpu:vnpu_queue_complete' >> $T/kprobe_events
echo 'p:vnpuk/ioctl_wait vnpu:vnpu_ioctl_wait' >> $T/kprobe_events

for e in syscalls/sys_enter_ioctl syscalls/sys_exit_ioctl \
	syscalls/sys_enter_read syscalls/sys_exit_read \
	gpu_scheduler/drm_sched_job gpu_scheduler/drm_run_job \
	gpu_scheduler/drm_sched_process_job \
	dma_fence/dma_fence_signaled \
	irq/irq_handler_entry irq/irq_handler_exit \
	irq_vectors/irq_work_entry irq_vectors/reschedule_entry \
	irq_vectors/call_function_single_entry \
	sched/sched_waking sched/sched_switch \
	workqueue/workqueue_queue_work workqueue/workqueue_execute_start \
	workqueue/workqueue_execute_end \
	vnpuk/run_job vnpuk/run_job_ret vnpuk/raw_submit vnpuk/raw_submit_ret \
	vnpuk/qcomplete vnpuk/ioctl_wait; do
	if [ -d $T/events/$e ]; then
		echo 1 > $T/events/$e/enable
	else
		echo "# no tracepoint $e"
	fi
done

echo 1 > $T/tracing_on
/tests/b-npu-bench -l -n "$N"
echo 0 > $T/tracing_on
echo "VNPU-TRACE-BEGIN"
cat $T/trace
echo "VNPU-TRACE-END"
echo > $T/kprobe_events 2>/dev/null || true
