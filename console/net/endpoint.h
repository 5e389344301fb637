#pragma once
// Where one node's lutra-ctld is and how to authenticate to it, and the result of one call.

#include <QByteArray>
#include <QString>

namespace lutra::console {

struct Endpoint {
    QString address; // "host:port", or "unix:/path/ctld.sock"
    QString tokenFile;
    QString tlsCa; // PEM CA: TLS on
    QString tlsCert;
    QString tlsKey;
    int callTimeoutMs = 10000; // deadline of every unary call
};

template <typename T> struct Reply {
    bool ok = false;
    QString error; // "UNAVAILABLE: failed to connect ...": the gRPC code and message
    T value;
    // The reply message as `lutractl --json` prints it under "result" (proto field names,
    // defaults included); empty when the call failed. Filled for every call: a few µs.
    QByteArray json;
};

} // namespace lutra::console
