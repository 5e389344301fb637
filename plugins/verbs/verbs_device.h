#pragma once
// The RDMA devices rdmacm works with, each with its one protection domain.

#include <lutra/status.h>

#include "verbs_handles.h"

#include <memory>
#include <string>
#include <vector>

namespace lutra::transport::verbs {

struct Device {
    ibv_context *context = nullptr; // opened and owned by librdmacm (the same as rdma_cm_id::verbs)
    std::string name;
    ibv_device_attr attributes{};
    ProtectionDomain pd;
    std::size_t index = 0; // into the transport's device list and per-device key arrays
};

// Every device, or a clear error naming what was looked for when there is none.
Result<std::vector<std::unique_ptr<Device>>> openDevices();

} // namespace lutra::transport::verbs
