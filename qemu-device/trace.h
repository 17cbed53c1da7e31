#include "trace/trace-hw_vnpu.h"
