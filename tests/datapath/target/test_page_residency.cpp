// A zero-copy read's range made resident before the transport sends it: a range evicted from the
// page cache (POSIX_FADV_DONTNEED) is read in and then all cached, a cached one reads nothing, and
// a file shrunk under the mapping is a failed fill, not a SIGBUS. The file lives in the working
// directory (the build tree), not in a tmpfs whose pages cannot be evicted.
#include "target/mapped_crcs.h"
#include "target/page_residency.h"

#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

using namespace lutra;
using namespace lutra::target;

namespace {

constexpr std::size_t kPage = 4096;

// Pages of `data` (page aligned) in the page cache, by mincore.
std::size_t residentPages(std::span<const std::byte> data)
{
    std::vector<unsigned char> bits((data.size() + kPage - 1) / kPage);
    if (::mincore(const_cast<std::byte *>(data.data()), data.size(), bits.data()) != 0) {
        return SIZE_MAX;
    }
    std::size_t resident = 0;
    for (const unsigned char bit : bits) {
        resident += bit & 1;
    }
    return resident;
}

} // namespace

class TestPageResidency : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    int m_fd = -1;
    std::vector<unsigned char> m_scratch;

    // `size` bytes written and synced, then dropped from the page cache.
    void writeColdFile(std::size_t size)
    {
        std::vector<std::byte> data(size, std::byte{0x5a});
        QCOMPARE(::ftruncate(m_fd, 0), 0);
        QCOMPARE(::pwrite(m_fd, data.data(), size, 0), static_cast<ssize_t>(size));
        QCOMPARE(::fdatasync(m_fd), 0);
        QCOMPARE(::posix_fadvise(m_fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    }

private slots:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>("residency-XXXXXX");
        QVERIFY(m_dir->isValid());
        m_fd = ::open((m_dir->path() + "/object").toStdString().c_str(), O_RDWR | O_CREAT, 0600);
        QVERIFY(m_fd >= 0);
        m_scratch.assign(residencyScratchBytes(std::size_t{16} << 20), 0);
    }
    void cleanup()
    {
        ::close(m_fd);
        m_dir.reset();
    }

    // Evicted, then made resident: every page of the range is cached afterwards (and only then),
    // and a second call finds nothing to read.
    void anEvictedRangeIsReadIn()
    {
        const std::size_t size = (std::size_t{4} << 20) + 100;
        writeColdFile(size);
        ObjectMapping object;
        auto mapping = object.cover(m_fd, size);
        QVERIFY2(mapping.ok(), mapping.status().toString().c_str());
        const auto whole = (*mapping)->bytes().subspan(0, size);
        const std::size_t pages = (size + kPage - 1) / kPage;
        QVERIFY2(residentPages(whole) < pages,
                 "the file's pages stayed cached after POSIX_FADV_DONTNEED: nothing to test");
        QCOMPARE(makeResident(whole, m_scratch), Residency::filled);
        QCOMPARE(residentPages(whole), pages);
        QCOMPARE(makeResident(whole, m_scratch), Residency::resident);
    }

    // A range that starts and ends inside pages, evicted again: its pages are read in, the
    // scratch it needs is what residencyScratchBytes says.
    void aRangeInsidePagesIsReadIn()
    {
        const std::size_t size = std::size_t{1} << 20;
        writeColdFile(size);
        ObjectMapping object;
        auto mapping = object.cover(m_fd, size);
        QVERIFY(mapping.ok());
        const auto range = (*mapping)->bytes().subspan(kPage + 10, 3 * kPage);
        std::vector<unsigned char> scratch(residencyScratchBytes(range.size()));
        QCOMPARE(scratch.size(), std::size_t{5});
        QCOMPARE(makeResident(range, scratch), Residency::filled);
        QCOMPARE(residentPages((*mapping)->bytes().subspan(kPage, 4 * kPage)), std::size_t{4});
        QCOMPARE(makeResident(range, std::span(scratch).first(3)), Residency::failed);
    }

    // The file cut to one page under a mapping of 1 MiB: the pages past its end cannot be read
    // in; that is a failed fill, and the process lives (a touch there would be a SIGBUS).
    void aShrunkFileFailsWithoutASignal()
    {
        const std::size_t size = std::size_t{1} << 20;
        writeColdFile(size);
        ObjectMapping object;
        auto mapping = object.cover(m_fd, size);
        QVERIFY(mapping.ok());
        QCOMPARE(::ftruncate(m_fd, kPage), 0);
        QCOMPARE(makeResident((*mapping)->bytes().subspan(0, size), m_scratch), Residency::failed);
        // What is left of the file can be read (the failed call may have read it already).
        const auto left = (*mapping)->bytes().subspan(0, kPage);
        QVERIFY(makeResident(left, m_scratch) != Residency::failed);
        QCOMPARE(residentPages(left), std::size_t{1});
    }
};

QTEST_GUILESS_MAIN(TestPageResidency)
#include "test_page_residency.moc"
