#include "verbs_device.h"

#include "transport/kit/errno_text.h"
#include "verbs_config.h"

#include <cerrno>
#include <cstring>

namespace lutra::transport::verbs {

namespace {

using kit::errnoText;

constexpr std::string_view kHowToGetOne =
    "load an RDMA driver (soft-RoCE: `modprobe rdma_rxe` and `rdma link add rxe0 type rxe "
    "netdev eth0`) or use another transport such as tcp";

} // namespace

Result<std::vector<std::unique_ptr<Device>>> openDevices()
{
    int count = 0;
    ibv_device **list = ibv_get_device_list(&count);
    const int error = errno;
    if (list != nullptr) {
        ibv_free_device_list(list);
    }
    if (list == nullptr || count == 0) {
        const std::string found =
            list == nullptr ? "failed: " + errnoText(error) + ", no RDMA support in this kernel?"
                            : std::string("0 devices");
        return Status(Errc::unavailable,
                      "verbs transport: no RDMA device: ibv_get_device_list() found none (" +
                          found +
                          "; looked for InfiniBand/RoCE/iWARP devices in /sys/class/infiniband "
                          "with the providers listed in /etc/libibverbs.d); " +
                          std::string(kHowToGetOne));
    }
    int usable = 0;
    ibv_context **contexts = rdma_get_devices(&usable);
    if (contexts == nullptr || usable == 0) {
        if (contexts != nullptr) {
            rdma_free_devices(contexts);
        }
        return Status(Errc::unavailable,
                      "verbs transport: no RDMA device usable by rdmacm: rdma_get_devices() "
                      "found 0 of the " +
                          std::to_string(count) +
                          " devices ibv_get_device_list() lists (is /dev/infiniband/rdma_cm "
                          "there? `modprobe rdma_ucm`)");
    }
    std::vector<std::unique_ptr<Device>> devices;
    Status failure;
    for (int i = 0; i < usable && failure.ok(); ++i) {
        if (devices.size() == kMaxDevices) {
            break;
        }
        auto device = std::make_unique<Device>();
        device->context = contexts[i];
        device->name = ibv_get_device_name(contexts[i]->device);
        device->index = devices.size();
        if (ibv_query_device(device->context, &device->attributes) != 0) {
            failure = {Errc::io_error, "verbs transport: ibv_query_device(" + device->name +
                                           "): " + errnoText(errno)};
            break;
        }
        device->pd.reset(ibv_alloc_pd(device->context));
        if (!device->pd) {
            failure = {Errc::io_error,
                       "verbs transport: ibv_alloc_pd(" + device->name + "): " + errnoText(errno)};
            break;
        }
        devices.push_back(std::move(device));
    }
    rdma_free_devices(contexts);
    if (!failure.ok()) {
        return failure;
    }
    return devices;
}

} // namespace lutra::transport::verbs
