// crc32c through ISA-L: the standard check value and RFC 3720 vectors, chaining, agreement with
// a bit-by-bit reference, and the per-page helpers bulk I/O uses.
#include "protocol/codec.h"
#include "protocol/crc32c.h"

#include <QTest>

#include <numeric>
#include <random>
#include <vector>

using namespace lutra;
using namespace lutra::protocol;

namespace {

std::span<const std::byte> bytesOf(std::string_view text)
{
    return std::as_bytes(std::span(text));
}

// Reflected Castagnoli polynomial, one bit at a time: slow and obviously right.
std::uint32_t referenceCrc32c(std::span<const std::byte> data)
{
    std::uint32_t crc = 0xffffffff;
    for (const std::byte b : data) {
        crc ^= std::to_integer<std::uint32_t>(b);
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0u);
        }
    }
    return ~crc;
}

std::vector<std::byte> randomBytes(std::size_t size, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<std::byte> data(size);
    for (auto &b : data) {
        b = static_cast<std::byte>(rng() & 0xff);
    }
    return data;
}

} // namespace

class TestProtocolCrc32c : public QObject {
    Q_OBJECT
private slots:
    void checkValue() { QCOMPARE(crc32c(bytesOf("123456789")), 0xe3069283u); }

    void rfc3720Vectors()
    {
        std::vector<std::byte> data(32, std::byte{0});
        QCOMPARE(crc32c(data), 0x8a9136aau);
        std::fill(data.begin(), data.end(), std::byte{0xff});
        QCOMPARE(crc32c(data), 0x62a8ab43u);
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::byte>(i);
        }
        QCOMPARE(crc32c(data), 0x46dd794eu);
        for (std::size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<std::byte>(31 - i);
        }
        QCOMPARE(crc32c(data), 0x113fdb5cu);
    }

    void emptyIsZero() { QCOMPARE(crc32c({}), 0u); }

    void chains()
    {
        const auto data = randomBytes(10000, 1);
        const auto whole = crc32c(data);
        for (const std::size_t cut :
             {std::size_t(0), std::size_t(1), std::size_t(4096), std::size_t(9999), data.size()}) {
            const auto span = std::span(data);
            QCOMPARE(crc32c(span.subspan(cut), crc32c(span.first(cut))), whole);
        }
    }

    void matchesReference()
    {
        for (const std::size_t size : {1, 3, 7, 8, 15, 64, 255, 4095, 4096, 4097, 65536}) {
            const auto data = randomBytes(size, unsigned(size));
            QCOMPARE(crc32c(data), referenceCrc32c(data));
        }
    }

    void contiguousPages()
    {
        const auto data = randomBytes(3 * kPageSize + 100, 7);
        std::vector<std::uint32_t> crcs(4);
        QVERIFY(computePageCrcs(std::span<const std::byte>(data), crcs).ok());
        for (std::size_t i = 0; i < 4; ++i) {
            const auto page =
                std::span(data).subspan(i * kPageSize, i < 3 ? kPageSize : std::size_t(100));
            QCOMPARE(crcs[i], referenceCrc32c(page));
        }
        std::vector<std::uint32_t> wrong(3);
        const auto status = computePageCrcs(std::span<const std::byte>(data), wrong);
        QCOMPARE(status.code(), Errc::invalid_argument);
        QCOMPARE(status.message(), std::string("12388 bytes are 4 pages but room for 3 crcs"));
        std::vector<std::uint32_t> none;
        QVERIFY(computePageCrcs(std::span<const std::byte>(), none).ok());
    }

    void scatteredPages()
    {
        const auto a = randomBytes(kPageSize, 1);
        const auto b = randomBytes(kPageSize, 2);
        const auto c = randomBytes(10, 3);
        const std::vector<std::span<const std::byte>> pages{a, b, c};
        std::vector<std::uint32_t> crcs(3);
        QVERIFY(computePageCrcs(pages, crcs).ok());
        QCOMPARE(crcs[0], referenceCrc32c(a));
        QCOMPARE(crcs[1], referenceCrc32c(b));
        QCOMPARE(crcs[2], referenceCrc32c(c));

        std::vector<std::uint32_t> two(2);
        QCOMPARE(computePageCrcs(pages, two).message(), std::string("3 pages but room for 2 crcs"));
        const auto big = randomBytes(kPageSize + 1, 4);
        const std::vector<std::span<const std::byte>> oversized{a, big};
        QCOMPARE(computePageCrcs(oversized, two).message(),
                 std::string("page 1 has 4097 bytes, more than a page"));
    }

    // A write with checksums as a client builds it: crcs from the pages, carried on the wire.
    void writeRequestCarriesPageCrcs()
    {
        const auto data = randomBytes(2 * kPageSize + 1, 9);
        std::array<std::uint32_t, 3> crcs{};
        QVERIFY(computePageCrcs(std::span<const std::byte>(data), crcs).ok());
        BulkIo io;
        io.pageCount = 3;
        io.lastPageBytes = 1;
        io.flags = kBulkChecksums;
        const Message message{5, "job", WriteRequest{io, Crc32List(crcs)}};
        std::vector<std::byte> buffer(encodedSize(message));
        QVERIFY(encode(message, buffer).ok());
        auto decoded = decode(buffer);
        QVERIFY(decoded.ok());
        const auto &received = std::get<WriteRequest>(decoded->body).pageCrcs;
        QCOMPARE(received.size(), std::size_t(3));
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(received[i], crcs[i]);
        }
    }
};

QTEST_GUILESS_MAIN(TestProtocolCrc32c)
#include "test_protocol_crc32c.moc"
