#pragma once
// One or more valid messages of every body type, shared by the protocol tests. The views point at
// static data, so the messages stay valid for the whole test run.

#include "protocol/messages.h"

#include <array>
#include <string>
#include <vector>

namespace lutra::protocol::testing {

struct Sample {
    std::string name; // also the seed corpus file name
    Message message;
};

inline const std::vector<Sample> &samples()
{
    static const std::array<std::uint32_t, 3> kWriteCrcs{0xe3069283, 0x00000000, 0xffffffff};
    static const std::array<std::uint32_t, 2> kReadCrcs{0x12345678, 0x9abcdef0};
    static const std::array<DirEntry, 3> kEntries{{{11, ObjectKind::file, "a"},
                                                   {12, ObjectKind::directory, "sub dir"},
                                                   {13, ObjectKind::file, "data.bin"}}};
    static const std::array<std::byte, 16> kDescriptor{
        std::byte{0xde}, std::byte{0xad}, std::byte{0xbe}, std::byte{0xef},
        std::byte{0x00}, std::byte{0x01}, std::byte{0x02}, std::byte{0x03},
        std::byte{0x04}, std::byte{0x05}, std::byte{0x06}, std::byte{0x07},
        std::byte{0x08}, std::byte{0x09}, std::byte{0x0a}, std::byte{0xff}};
    static const std::string kLongPath = [] {
        std::string path; // 16 components of 254 bytes and a last one: exactly the maximum
        for (int i = 0; i < 16; ++i) {
            path += std::string(254, 'p') + "/";
        }
        path += std::string(kMaxPathLength - path.size(), 'q');
        return path;
    }();
    const ObjectAttr attr{0x1122334455667788, ObjectKind::file, 0644, 12345, 1700000000123456789};
    const ObjectAttr dirAttr{42, ObjectKind::directory, 0755, 4096, 1};
    const BulkIo io{7, 1u << 20, 3, 100, 0, OpaqueBytes{kDescriptor}};
    BulkIo summed = io;
    summed.flags = kBulkChecksums;
    const std::string_view job = "slurm.4242";

    static const std::vector<Sample> all{
        // Connect is framed as version 1 whatever the versions offered and chosen.
        {"connect-request",
         {1, job,
          ConnectRequest{1, 2, kMaxBulkBytes, kMaxMessageSize,
                         kFeatureChecksums | kFeatureBlockingCallbacks | (1ull << 63),
                         "client-7f3a"},
          1}},
        {"connect-reply",
         {1, {}, ConnectReply{2, 1u << 20, kMinMessageSize, kFeatureChecksums, "ost0"}, 1}},
        {"connect-request-join",
         {1, job,
          ConnectRequest{1, 2, kMaxBulkBytes, kMaxMessageSize,
                         kFeatureChecksums | kFeatureMultiConnection, "client-7f3a",
                         0x5eed0fc0ffee0001},
          1}},
        {"connect-reply-cookie",
         {1,
          {},
          ConnectReply{2, 1u << 20, kMinMessageSize, kFeatureMultiConnection, "ost0",
                       0x5eed0fc0ffee0001},
          1}},
        {"ping-request", {2, job, PingRequest{}}},
        {"ping-reply", {2, {}, PingReply{}}},
        {"statfs-request", {3, job, StatfsRequest{}}},
        {"statfs-reply", {3, {}, StatfsReply{4096, 1000, 500, 400, 100000, 99000}}},
        {"create-request", {4, job, CreateRequest{"dir/file.0", 0600, kCreateExclusive}}},
        {"create-reply", {4, {}, CreateReply{0xabcdef, attr}}},
        {"open-request", {5, job, OpenRequest{"dir/file.0", kOpenRead | kOpenWrite}}},
        {"open-long-path", {5, job, OpenRequest{kLongPath, kOpenRead}}},
        {"open-reply", {5, {}, OpenReply{0xabcdef, attr}}},
        {"close-request", {6, job, CloseRequest{0xabcdef}}},
        {"close-reply", {6, {}, CloseReply{}}},
        {"stat-request", {7, job, StatRequest{"."}}},
        {"stat-reply", {7, {}, StatReply{dirAttr}}},
        {"unlink-request", {8, job, UnlinkRequest{"dir/file.0"}}},
        {"unlink-reply", {8, {}, UnlinkReply{}}},
        {"truncate-request", {9, job, TruncateRequest{0xabcdef, 1u << 30}}},
        {"truncate-reply", {9, {}, TruncateReply{}}},
        {"mkdir-request", {10, job, MkdirRequest{"dir", 0750}}},
        {"mkdir-reply", {10, {}, MkdirReply{dirAttr}}},
        {"rmdir-request", {11, job, RmdirRequest{"dir"}}},
        {"rmdir-reply", {11, {}, RmdirReply{}}},
        {"readdir-request", {12, job, ReaddirRequest{"dir", 99, 256}}},
        {"readdir-reply", {12, {}, ReaddirReply{77, false, DirEntryList(kEntries)}}},
        {"readdir-reply-eof", {12, {}, ReaddirReply{0, true, {}}}},
        {"read-request", {13, job, ReadRequest{summed}}},
        {"read-reply", {13, {}, ReadReply{4196, kBulkChecksums, Crc32List(kReadCrcs)}}},
        {"read-reply-nosum", {13, {}, ReadReply{0, 0, {}}}},
        {"write-request", {14, job, WriteRequest{summed, Crc32List(kWriteCrcs)}}},
        {"write-request-nosum", {14, job, WriteRequest{io, {}}}},
        {"write-reply", {14, {}, WriteReply{8292}}},
        {"lock-enqueue-request",
         {15, job, LockEnqueueRequest{0xabcdef, LockMode::pw, kLockNonBlocking}}},
        {"lock-enqueue-reply", {15, {}, LockEnqueueReply{0x5555, LockMode::pw, 123456789}}},
        // A version 1 target's grant: no object size on the wire.
        {"lock-enqueue-reply-v1",
         {15, {}, LockEnqueueReply{0x5555, LockMode::pw, LockEnqueueReply::kSizeUnknown}, 1}},
        {"lock-cancel-request", {16, job, LockCancelRequest{0x5555}}},
        {"lock-cancel-reply", {16, {}, LockCancelReply{}}},
        {"blocking-callback-request",
         {0xffffffffffffffff, "other.job", BlockingCallbackRequest{0x5555, LockMode::pr}}},
        {"blocking-callback-reply", {0xffffffffffffffff, {}, BlockingCallbackReply{}}},
        {"error-reply",
         {7, {}, ErrorReply{Opcode::stat, Errc::not_found, "dir/file.0: no such object"}}},
    };
    return all;
}

} // namespace lutra::protocol::testing
