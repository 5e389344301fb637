// The zero-copy read's page CRCs through a mapping: the same sums as from a buffer, a mapping
// that follows a growing file, and a file shrinking under the mapping (SIGBUS) as a false return
// instead of a dead process, while a SIGBUS anywhere else still ends it.
#include "protocol/crc32c.h"
#include "protocol/messages.h"
#include "target/mapped_crcs.h"

#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

using namespace lutra;
using namespace lutra::target;
using protocol::kPageSize;

namespace {

std::vector<std::byte> pattern(std::size_t size, unsigned seed)
{
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) {
        bytes[i] = static_cast<std::byte>((i * 31 + seed * 7 + i / 4096) & 0xff);
    }
    return bytes;
}

std::vector<std::uint32_t> bufferCrcs(std::span<const std::byte> data)
{
    std::vector<std::uint32_t> crcs((data.size() + kPageSize - 1) / kPageSize);
    if (!protocol::computePageCrcs(data, crcs)) {
        return {};
    }
    return crcs;
}

} // namespace

class TestMappedCrcs : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    int m_fd = -1;

    void writeFile(std::span<const std::byte> data)
    {
        QCOMPARE(::ftruncate(m_fd, 0), 0);
        QCOMPARE(::pwrite(m_fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
    }

private slots:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        m_fd = ::open((m_dir->path() + "/object").toStdString().c_str(), O_RDWR | O_CREAT, 0600);
        QVERIFY(m_fd >= 0);
    }

    void cleanup()
    {
        ::close(m_fd);
        m_dir.reset();
    }

    // Whole pages, a partial last page, and a range starting inside a page: the sums of a
    // buffer holding the same bytes.
    void sumsMatchABuffer()
    {
        const auto data = pattern(5 * kPageSize + 100, 1);
        writeFile(data);
        ObjectMapping object;
        auto mapping = object.cover(m_fd, data.size());
        QVERIFY2(mapping.ok(), mapping.status().toString().c_str());
        const std::span<const std::byte> all(data);
        std::vector<std::uint32_t> crcs(4);
        QVERIFY(
            guardedPageCrcs((*mapping)->bytes().subspan(2 * kPageSize, 3 * kPageSize + 100), crcs));
        QVERIFY(crcs == bufferCrcs(all.subspan(2 * kPageSize)));

        auto unaligned = FileMapping::map(m_fd, 100, 2 * kPageSize, FileMapping::Fill::now);
        QVERIFY2(unaligned.ok(), unaligned.status().toString().c_str());
        crcs.resize(2);
        QVERIFY(guardedPageCrcs(unaligned->bytes(), crcs));
        QVERIFY(crcs == bufferCrcs(all.subspan(100, 2 * kPageSize)));
        QVERIFY(!guardedPageCrcs(unaligned->bytes(), {crcs.data(), 1})); // one slot per page
    }

    // A range the file no longer holds: false, the process alive; the guard works again after
    // (SIGBUS is not left blocked) and sums what the file still holds.
    void aFileShrunkUnderTheMappingIsAFalseReturn()
    {
        const auto data = pattern(8 * kPageSize, 2);
        writeFile(data);
        ObjectMapping object;
        auto mapping = object.cover(m_fd, data.size());
        QVERIFY(mapping.ok());
        std::vector<std::uint32_t> crcs(8);
        QVERIFY(guardedPageCrcs((*mapping)->bytes().first(data.size()), crcs)); // faulted in
        QCOMPARE(::ftruncate(m_fd, 3 * kPageSize), 0);
        for (int attempt = 0; attempt < 2; ++attempt) {
            QVERIFY(!guardedPageCrcs((*mapping)->bytes().first(data.size()), crcs));
        }
        std::vector<std::uint32_t> kept(3);
        QVERIFY(guardedPageCrcs((*mapping)->bytes().first(3 * kPageSize), kept));
        QVERIFY(kept == bufferCrcs(std::span<const std::byte>(data).first(3 * kPageSize)));
    }

    // The mapping reaches past the file's end: pages written later are summed through it; a read
    // past the mapping gets a larger one, and the old one stays readable for whoever holds it.
    void theMappingFollowsAGrowingFile()
    {
        const auto data = pattern(kPageSize, 3);
        writeFile(data);
        ObjectMapping object;
        auto first = object.cover(m_fd, kPageSize);
        QVERIFY(first.ok());
        const std::size_t firstSize = (*first)->bytes().size();
        QVERIFY(firstSize >= kPageSize);
        const auto grown = pattern(firstSize + 2 * kPageSize, 4);
        writeFile(grown);
        std::vector<std::uint32_t> crcs(1);
        QVERIFY(guardedPageCrcs((*first)->bytes().subspan(firstSize - kPageSize, kPageSize), crcs));
        QCOMPARE(crcs[0], protocol::crc32c(std::span<const std::byte>(grown).subspan(
                              firstSize - kPageSize, kPageSize)));
        QVERIFY((*object.cover(m_fd, firstSize))->bytes().size() == firstSize); // the same one
        auto second = object.cover(m_fd, grown.size());
        QVERIFY(second.ok());
        QVERIFY((*second)->bytes().size() >= grown.size());
        crcs.resize(2);
        QVERIFY(guardedPageCrcs((*second)->bytes().subspan(firstSize, 2 * kPageSize), crcs));
        QVERIFY(crcs == bufferCrcs(std::span<const std::byte>(grown).subspan(firstSize)));
        QVERIFY(guardedPageCrcs((*first)->bytes().first(2 * kPageSize), crcs));
    }

    // The handler only catches faults of a guarded sum: any other SIGBUS ends the process as
    // before (a child touches a page past its file's end outside the guard).
    void aSigbusOutsideAGuardedSumStillEndsTheProcess()
    {
        writeFile(pattern(kPageSize, 5));
        std::vector<std::uint32_t> crcs(1);
        auto mapping = FileMapping::map(m_fd, 0, 2 * kPageSize, FileMapping::Fill::onTouch);
        QVERIFY(mapping.ok());
        QVERIFY(guardedPageCrcs(mapping->bytes().first(kPageSize), crcs)); // handler installed
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            const auto *past = reinterpret_cast<const volatile unsigned char *>(
                mapping->bytes().data() + kPageSize);
            (void)*past; // SIGBUS: beyond the file's end
            ::_exit(0);  // survived: the handler swallowed a fault that was not its own
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY2(!(WIFEXITED(status) && WEXITSTATUS(status) == 0), "the child survived a SIGBUS");
    }
};

QTEST_GUILESS_MAIN(TestMappedCrcs)
#include "test_mapped_crcs.moc"
