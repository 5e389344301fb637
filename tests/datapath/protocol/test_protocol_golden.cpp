// Every protocol version's bytes, frozen. `golden/v<N>.txt` holds, for each sample message (one
// of every body type, test_protocol_samples.h), its encoding as version N: a peer of version N
// sends and expects exactly these bytes, so they may never change once N is out. A change to
// the format goes into a new version (kMaxVersion + 1) and its own file. Here every version this
// build speaks encodes every sample to its pinned bytes, and decodes them back to a message that
// encodes to the same bytes again.
//
// A new version's file (or a new sample's line) is written with LUTRA_WRITE_PROTOCOL_GOLDEN=1;
// lines already there are never rewritten: a mismatch is a wire break, reported, not fixed.
#include "protocol/codec.h"
#include "test_protocol_samples.h"

#include <QTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

using namespace lutra;
using namespace lutra::protocol;
using lutra::protocol::testing::samples;

namespace {

using Bytes = std::vector<std::byte>;

std::string hexOf(const Bytes &bytes)
{
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const std::byte b : bytes) {
        const auto value = std::to_integer<unsigned>(b);
        out.push_back(kDigits[value >> 4]);
        out.push_back(kDigits[value & 0xf]);
    }
    return out;
}

std::optional<Bytes> bytesOf(const std::string &hex)
{
    if (hex.size() % 2 != 0) {
        return std::nullopt;
    }
    Bytes out(hex.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) {
        unsigned value = 0;
        for (const char c : {hex[2 * i], hex[2 * i + 1]}) {
            const bool digit = c >= '0' && c <= '9';
            if (!digit && !(c >= 'a' && c <= 'f')) {
                return std::nullopt;
            }
            value = value * 16 + static_cast<unsigned>(digit ? c - '0' : c - 'a' + 10);
        }
        out[i] = std::byte(value);
    }
    return out;
}

// The sample as a peer of `version` sends it: Connect is framed as version 1 whatever it
// negotiates (codec rule), every other message as its session's version.
Message atVersion(Message message, std::uint16_t version)
{
    message.version = std::holds_alternative<ConnectRequest>(message.body) ||
                              std::holds_alternative<ConnectReply>(message.body)
                          ? std::uint16_t{1}
                          : version;
    return message;
}

Result<Bytes> encodeToBytes(const Message &message)
{
    Bytes out(kMaxMessageSize);
    auto size = encode(message, out);
    if (!size) {
        return size.status();
    }
    out.resize(*size);
    return out;
}

std::filesystem::path goldenFile(std::uint16_t version)
{
    return std::filesystem::path(LUTRA_PROTOCOL_GOLDEN_DIR) /
           ("v" + std::to_string(version) + ".txt");
}

// name -> hex, in file order; a malformed line is an error naming it.
Result<std::vector<std::pair<std::string, std::string>>>
readGolden(const std::filesystem::path &file)
{
    std::vector<std::pair<std::string, std::string>> lines;
    std::ifstream in(file);
    if (!in) {
        return lines; // no file yet: every sample is new
    }
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (line.empty() || line.starts_with('#')) {
            continue;
        }
        const auto space = line.find(' ');
        if (space == std::string::npos || space == 0) {
            return Status(Errc::invalid_argument, file.string() + ":" + std::to_string(number) +
                                                      ": expected '<sample> <hex>'");
        }
        lines.emplace_back(line.substr(0, space), line.substr(space + 1));
    }
    return lines;
}

} // namespace

class TestProtocolGolden : public QObject {
    Q_OBJECT

private slots:
    void everyVersionsBytesArePinned_data()
    {
        QTest::addColumn<int>("version");
        for (std::uint16_t version = kMinVersion; version <= kMaxVersion; ++version) {
            QTest::newRow(("version " + std::to_string(version)).c_str()) << int{version};
        }
    }

    void everyVersionsBytesArePinned()
    {
        QFETCH(int, version);
        const auto v = static_cast<std::uint16_t>(version);
        const std::filesystem::path file = goldenFile(v);
        auto golden = readGolden(file);
        QVERIFY2(golden.ok(), golden.status().toString().c_str());
        std::map<std::string, std::string> pinned(golden->begin(), golden->end());
        QCOMPARE(pinned.size(), golden->size()); // no sample twice

        const bool write = qEnvironmentVariableIntValue("LUTRA_WRITE_PROTOCOL_GOLDEN") == 1;
        std::vector<std::string> added;
        for (const auto &sample : samples()) {
            auto encoded = encodeToBytes(atVersion(sample.message, v));
            QVERIFY2(encoded.ok(), (sample.name + ": " + encoded.status().toString()).c_str());
            const std::string hex = hexOf(*encoded);
            const auto it = pinned.find(sample.name);
            if (it == pinned.end()) {
                if (!write) {
                    QFAIL(qPrintable(QString::fromStdString(
                        file.string() + " has no line for sample '" + sample.name +
                        "': add it with LUTRA_WRITE_PROTOCOL_GOLDEN=1")));
                }
                added.push_back(sample.name + " " + hex);
                continue;
            }
            QVERIFY2(it->second == hex,
                     qPrintable(QString::fromStdString(
                         "version " + std::to_string(v) + " encodes '" + sample.name +
                         "' differently from " + file.string() +
                         ": its peers would not read it; put the change in a new version")));
        }
        if (!added.empty()) {
            std::ofstream out(file, std::ios::app);
            for (const auto &line : added) {
                out << line << '\n';
            }
            QVERIFY(out.good());
        }
    }

    // What a version-N peer sent decodes here, and encodes back to the same bytes: nothing of
    // it is dropped or read differently.
    void everyPinnedMessageDecodesAndEncodesBack_data() { everyVersionsBytesArePinned_data(); }

    void everyPinnedMessageDecodesAndEncodesBack()
    {
        QFETCH(int, version);
        const auto v = static_cast<std::uint16_t>(version);
        auto golden = readGolden(goldenFile(v));
        QVERIFY2(golden.ok(), golden.status().toString().c_str());
        QCOMPARE(golden->size(), samples().size());
        for (const auto &[name, hex] : *golden) {
            const auto bytes = bytesOf(hex);
            QVERIFY2(bytes.has_value(), (name + ": not hex").c_str());
            auto decoded = decode(*bytes);
            QVERIFY2(decoded.ok(), (name + ": " + decoded.status().toString()).c_str());
            QCOMPARE(decoded->version, std::holds_alternative<ConnectRequest>(decoded->body) ||
                                               std::holds_alternative<ConnectReply>(decoded->body)
                                           ? std::uint16_t{1}
                                           : v);
            auto again = encodeToBytes(*decoded);
            QVERIFY2(again.ok(), (name + ": " + again.status().toString()).c_str());
            QVERIFY2(hexOf(*again) == hex, (name + ": decodes to a different message").c_str());
        }
    }

    // The pinned bytes differ between versions only where the format changed: version 2 added
    // the object's size to a lock grant, and every message's header carries its version.
    void versionsDifferOnlyWhereTheFormatChanged()
    {
        auto v1 = readGolden(goldenFile(1));
        auto v2 = readGolden(goldenFile(2));
        QVERIFY(v1.ok() && v2.ok());
        QCOMPARE(v1->size(), samples().size());
        const std::map<std::string, std::string> second(v2->begin(), v2->end());
        for (const auto &[name, hex1] : *v1) {
            const auto it = second.find(name);
            QVERIFY2(it != second.end(), name.c_str());
            auto bytes1 = *bytesOf(hex1);
            auto bytes2 = *bytesOf(it->second);
            if (name.starts_with("lock-enqueue-reply")) {
                QCOMPARE(bytes2.size(), bytes1.size() + 8); // the grant's object size
                bytes2.resize(bytes1.size());
                bytes2[12] = bytes1[12]; // body length
            }
            bytes2[4] = bytes1[4]; // the header's version
            QVERIFY2(bytes1 == bytes2, name.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestProtocolGolden)
#include "test_protocol_golden.moc"
