// A site's own program built only from the installed client library (pkg-config lutra-client):
// mounts the target given on the command line, writes a file and reads it back.
#include <lutra/client.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace {

int fail(std::string_view what, const lutra::Status &status)
{
    std::fprintf(stderr, "client_program: %.*s: %s\n", static_cast<int>(what.size()), what.data(),
                 status.message().c_str());
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: client_program TARGET_URI\n");
        return 2;
    }
    using namespace lutra::client;
    MountOptions options;
    options.targets = {argv[1]};
    auto mount = Mount::mount(options);
    if (!mount) {
        return fail("mount", mount.status());
    }
    const std::string text = "written through the packaged liblutra-client.a";
    {
        auto file = (*mount)->open("hello", kOpenWrite | kOpenCreate);
        if (!file) {
            return fail("open for writing", file.status());
        }
        auto written = (*file)->pwrite(std::as_bytes(std::span(text)), 0);
        if (!written || *written != text.size()) {
            return fail("pwrite", written.ok() ? lutra::Status() : written.status());
        }
        if (auto closed = (*file)->close(); !closed) {
            return fail("close", closed);
        }
    }
    auto file = (*mount)->open("hello", kOpenRead);
    if (!file) {
        return fail("open for reading", file.status());
    }
    std::string back(text.size(), '\0');
    auto got = (*file)->pread(std::as_writable_bytes(std::span(back)), 0);
    if (!got) {
        return fail("pread", got.status());
    }
    if (auto closed = (*file)->close(); !closed) {
        return fail("close after reading", closed);
    }
    std::printf("%s\n", back.c_str());
    return back == text ? 0 : 1;
}
