// ObjectStore: no name reaches outside the backing directory, readdir pages by cookie, and the
// ordinary operations map errors to Errc with the object named.
#include "target/object_store.h"

#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>

using namespace lutra;
using namespace lutra::target;
namespace fs = std::filesystem;

namespace {

iovec iov(const std::string &text)
{
    return {const_cast<char *>(text.data()), text.size()};
}

} // namespace

class TestObjectStore : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    fs::path m_root;
    fs::path m_outside;
    std::unique_ptr<ObjectStore> m_store;

    std::size_t outsideEntries() const
    {
        return static_cast<std::size_t>(
            std::distance(fs::directory_iterator(m_outside), fs::directory_iterator()));
    }

    void verifyEscape(const Status &status, const std::string &name)
    {
        QCOMPARE(status.code(), Errc::permission_denied);
        const std::string expected = "object name '" + name + "' escapes the backing directory";
        QVERIFY2(status.message() == expected, status.message().c_str());
    }

private slots:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        const fs::path base = m_dir->path().toStdString();
        m_root = base / "root";
        m_outside = base / "outside";
        fs::create_directory(m_root);
        fs::create_directory(m_outside);
        {
            std::FILE *secret = std::fopen((m_outside / "secret").c_str(), "w");
            QVERIFY(secret != nullptr);
            std::fputs("secret", secret);
            std::fclose(secret);
        }
        fs::create_directory(m_root / "dir");
        fs::create_directory_symlink("../outside", m_root / "out");
        fs::create_directory_symlink(m_outside, m_root / "abs");
        fs::create_directory_symlink("/proc/self/root", m_root / "procroot");
        fs::create_directory_symlink("dir", m_root / "in");
        auto store = ObjectStore::openRoot(m_root.string());
        QVERIFY2(store.ok(), store.status().toString().c_str());
        m_store = std::make_unique<ObjectStore>(std::move(store).value());
    }

    void cleanup()
    {
        m_store.reset();
        m_dir.reset();
    }

    void dotDotIsRefused()
    {
        verifyEscape(m_store->create("../x").status(), "../x");
        verifyEscape(m_store->mkdir("../x"), "../x");
        verifyEscape(m_store->open("../outside/secret").status(), "../outside/secret");
        verifyEscape(m_store->unlink("../outside/secret"), "../outside/secret");
        verifyEscape(m_store->stat("dir/../../outside").status(), "dir/../../outside");
        verifyEscape(m_store->readdir("..", 0).status(), "..");
        verifyEscape(m_store->rmdir("../outside"), "../outside");
        verifyEscape(m_store->truncate("../outside/secret", 0), "../outside/secret");
        QCOMPARE(outsideEntries(), std::size_t(1));
        QVERIFY(fs::exists(m_outside / "secret"));
        QCOMPARE(fs::file_size(m_outside / "secret"), std::uintmax_t(6));
    }

    void absoluteNamesAreRefused()
    {
        const std::string secret = (m_outside / "secret").string();
        verifyEscape(m_store->open(secret).status(), secret);
        verifyEscape(m_store->create("/tmp/lutra-escape").status(), "/tmp/lutra-escape");
        verifyEscape(m_store->stat("/proc/self/root/etc").status(), "/proc/self/root/etc");
        QVERIFY(!fs::exists("/tmp/lutra-escape"));
    }

    void symlinksOutsideAreRefused()
    {
        for (const std::string link : {"out", "abs"}) {
            verifyEscape(m_store->create(link + "/new").status(), link + "/new");
            verifyEscape(m_store->open(link + "/secret").status(), link + "/secret");
            verifyEscape(m_store->mkdir(link + "/d"), link + "/d");
            verifyEscape(m_store->unlink(link + "/secret"), link + "/secret");
            verifyEscape(m_store->stat(link).status(), link);
            verifyEscape(m_store->readdir(link, 0).status(), link);
            verifyEscape(m_store->truncate(link + "/secret", 0), link + "/secret");
        }
        QCOMPARE(outsideEntries(), std::size_t(1));
        QCOMPARE(fs::file_size(m_outside / "secret"), std::uintmax_t(6));
        // Unlinking the symlink itself only removes the link, inside the root.
        QVERIFY(m_store->unlink("out").ok());
        QVERIFY(fs::exists(m_outside / "secret"));
    }

    void procMagicLinksAreRefused()
    {
        verifyEscape(m_store->stat("procroot/etc").status(), "procroot/etc");
        verifyEscape(m_store->create("procroot/tmp/lutra-escape").status(),
                     "procroot/tmp/lutra-escape");
        // A relative link into /proc: beneath the root there is no /proc, and magic links such
        // as /proc/self/fd/N are never followed.
        fs::create_symlink("/proc/self/fd/0", m_root / "fd0");
        verifyEscape(m_store->open("fd0").status(), "fd0");
        QVERIFY(!fs::exists("/tmp/lutra-escape"));
    }

    void symlinksInsideAreFine()
    {
        auto handle = m_store->create("in/f");
        QVERIFY2(handle.ok(), handle.status().toString().c_str());
        QVERIFY(fs::exists(m_root / "dir" / "f"));
        QVERIFY(m_store->stat("in/f").ok());
        QVERIFY(m_store->mkdir("in/sub").ok());
        QVERIFY(fs::is_directory(m_root / "dir" / "sub"));
        QVERIFY(m_store->stat("dir/../in/f").ok());
    }

    void invalidNames()
    {
        QCOMPARE(m_store->create("").status().code(), Errc::invalid_argument);
        QCOMPARE(m_store->create(std::string("a\0b", 3)).status().code(), Errc::invalid_argument);
        QCOMPARE(m_store->create(std::string(256, 'x')).status().code(), Errc::invalid_argument);
        QVERIFY(m_store->create(std::string(255, 'x')).ok());
        std::string longName;
        while (longName.size() <= ObjectStore::kMaxNameLength) {
            longName += "dir/";
        }
        QCOMPARE(m_store->stat(longName).status().code(), Errc::invalid_argument);
        QCOMPARE(
            m_store->mkdir("dir/.."),
            Status(Errc::invalid_argument, "object name 'dir/..' does not end in a plain name"));
        QCOMPARE(m_store->create(".lutra/commit.log").status().code(), Errc::permission_denied);
        QCOMPARE(m_store->stat("dir/../.lutra").status().code(), Errc::permission_denied);
    }

    void normalOperations()
    {
        auto handle = m_store->create("dir/obj");
        QVERIFY(handle.ok());
        QCOMPARE(m_store->create("dir/obj").status().code(), Errc::already_exists);

        const std::string first = "hello, ";
        const std::string second = "object store";
        const iovec parts[] = {iov(first), iov(second)};
        auto written = handle->pwritev(parts, 100);
        QVERIFY(written.ok());
        QCOMPARE(*written, first.size() + second.size());

        auto attr = m_store->stat("dir/obj");
        QVERIFY(attr.ok());
        QCOMPARE(attr->size, std::uint64_t(119));
        QCOMPARE(attr->type, ObjectType::file);
        QVERIFY(attr->mtime.time_since_epoch().count() > 0);
        QCOMPARE(m_store->stat("dir")->type, ObjectType::directory);

        auto reopened = m_store->open("dir/obj");
        QVERIFY(reopened.ok());
        std::byte buffer[64]{};
        auto got = reopened->pread(buffer, 100);
        QVERIFY(got.ok());
        QCOMPARE(*got, std::size_t(19)); // short only at end of file
        QCOMPARE(std::string(reinterpret_cast<const char *>(buffer), 19),
                 std::string("hello, object store"));

        QVERIFY(m_store->truncate("dir/obj", 10).ok());
        QCOMPARE(reopened->stat()->size, std::uint64_t(10));
        QVERIFY(reopened->truncate(0).ok());
        QCOMPARE(m_store->stat("dir/obj")->size, std::uint64_t(0));

        QCOMPARE(m_store->open("dir").status().code(), Errc::failed_precondition);
        QCOMPARE(m_store->rmdir("dir").code(), Errc::failed_precondition);
        QCOMPARE(m_store->unlink("dir").code(), Errc::failed_precondition);
        QVERIFY(m_store->unlink("dir/obj").ok());
        const auto missing = m_store->open("dir/obj").status();
        QCOMPARE(missing, Status(Errc::not_found, "open 'dir/obj': no such object"));
        QCOMPARE(m_store->unlink("dir/obj").code(), Errc::not_found);

        QVERIFY(m_store->mkdir("d2").ok());
        QCOMPARE(m_store->mkdir("d2").code(), Errc::already_exists);
        QVERIFY(m_store->rmdir("d2").ok());
        QCOMPARE(m_store->rmdir("d2").code(), Errc::not_found);

        auto space = m_store->statfs();
        QVERIFY(space.ok());
        QVERIFY(space->totalBytes > 0);
        QVERIFY(space->blockSize > 0);
    }

    void readdirPagesOver1000Entries()
    {
        QVERIFY(m_store->mkdir("many").ok());
        for (int i = 0; i < 1000; ++i) {
            QVERIFY(m_store->create("many/obj" + std::to_string(i)).ok());
        }
        QVERIFY(m_store->mkdir("many/subdir").ok());
        std::set<std::string> seen;
        std::uint64_t cookie = 0;
        int pages = 0;
        for (;;) {
            auto page = m_store->readdir("many", cookie, 97);
            QVERIFY2(page.ok(), page.status().toString().c_str());
            QVERIFY(page->entries.size() <= 97);
            for (const auto &entry : page->entries) {
                QVERIFY2(seen.insert(entry.name).second, entry.name.c_str());
                QCOMPARE(entry.type,
                         entry.name == "subdir" ? ObjectType::directory : ObjectType::file);
            }
            ++pages;
            QVERIFY(pages < 100);
            if (page->end) {
                break;
            }
            cookie = page->nextCookie;
        }
        QCOMPARE(seen.size(), std::size_t(1001));
        QVERIFY(pages >= 11);
        QVERIFY(seen.count("obj999") == 1);
        QCOMPARE(m_store->readdir("many", 0, 0).status().code(), Errc::out_of_range);
        QCOMPARE(m_store->readdir("many", 0, ObjectStore::kMaxReaddirEntries + 1).status().code(),
                 Errc::out_of_range);
    }

    void readdirHidesReservedDirectory()
    {
        QVERIFY(m_store->openReserved("x", O_RDWR | O_CREAT).ok());
        QVERIFY(fs::exists(m_root / ".lutra" / "x"));
        auto page = m_store->readdir(".", 0);
        QVERIFY(page.ok());
        QVERIFY(page->end);
        std::set<std::string> names;
        for (const auto &entry : page->entries) {
            names.insert(entry.name);
        }
        QCOMPARE(names, (std::set<std::string>{"abs", "dir", "in", "out", "procroot"}));
    }
};

QTEST_GUILESS_MAIN(TestObjectStore)
#include "test_object_store.moc"
