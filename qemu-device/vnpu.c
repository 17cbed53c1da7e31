/* placeholder, replaced by the device model */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "qom/object.h"
#include "vnpu_hw.h"
#include "trace.h"

#define TYPE_VNPU "vnpu"
OBJECT_DECLARE_SIMPLE_TYPE(VnpuState, VNPU)
struct VnpuState { PCIDevice parent_obj; };

static void vnpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->vendor_id = VNPU_PCI_VENDOR_ID;
    k->device_id = VNPU_PCI_DEVICE_ID;
    k->revision = VNPU_PCI_REVISION;
    k->class_id = VNPU_PCI_CLASS_CODE >> 8;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo vnpu_info = {
    .name = TYPE_VNPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(VnpuState),
    .class_init = vnpu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void vnpu_register_types(void)
{
    type_register_static(&vnpu_info);
}
type_init(vnpu_register_types)
