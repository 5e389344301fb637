// The transport plugin loader: plugins are found by name, bad ones (no entry point, wrong ABI,
// duplicate name, not a shared object, missing) give an error naming the plugin and the path, and
// the host keeps the plugins that did load. In-process plugins register without dlopen.
#include "transport/loader.h"

#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace lutra;
using namespace lutra::transport;

namespace {

const std::string kDir = LUTRA_TEST_PLUGIN_DIR;

Result<std::unique_ptr<Transport>> createNothing(const TransportOptions &)
{
    return Status(Errc::unimplemented, "in-process double");
}

struct Captured {
    std::vector<std::string> lines;
};

void capture(void *context, LogLevel level, std::string_view text)
{
    if (level >= LogLevel::warning) {
        static_cast<Captured *>(context)->lines.emplace_back(text);
    }
}

bool contains(const std::string &text, std::string_view part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

class TestTransportLoader : public QObject {
    Q_OBJECT

private slots:
    void loadsByName()
    {
        PluginLoader loader({}, {"/nonexistent-dir", kDir});
        auto entry = loader.load("fake");
        QVERIFY2(entry.ok(), entry.status().toString().c_str());
        QCOMPARE(std::string((*entry)->name), std::string("fake"));
        QCOMPARE(loader.origin("fake"), kDir + "/liblutra-transport-fake.so");
        // The plugin's own factory error comes back unchanged.
        auto transport = loader.create("fake", {});
        QCOMPARE(transport.status().code(), Errc::unimplemented);
    }

    void missingPluginNamesThePath()
    {
        PluginLoader loader({}, {"/nonexistent-dir", kDir});
        auto entry = loader.load("nosuch");
        QCOMPARE(entry.status().code(), Errc::not_found);
        const std::string text = entry.status().message();
        QVERIFY2(contains(text, "'nosuch'"), text.c_str());
        QVERIFY2(contains(text, "liblutra-transport-nosuch.so"), text.c_str());
        QVERIFY2(contains(text, "/nonexistent-dir:" + kDir), text.c_str());
    }

    void missingEntryPoint()
    {
        PluginLoader loader({}, {kDir});
        auto entry = loader.load("nosym");
        QCOMPARE(entry.status().code(), Errc::not_found);
        const std::string text = entry.status().message();
        QVERIFY2(contains(text, "'nosym' (" + kDir + "/liblutra-transport-nosym.so)"),
                 text.c_str());
        QVERIFY2(contains(text, "no entry point lutra_transport_entry"), text.c_str());
    }

    void abiMismatch()
    {
        PluginLoader loader({}, {kDir});
        auto entry = loader.load("badabi");
        QCOMPARE(entry.status().code(), Errc::failed_precondition);
        const std::string text = entry.status().message();
        QVERIFY2(contains(text, "'badabi' (" + kDir + "/liblutra-transport-badabi.so)"),
                 text.c_str());
        QVERIFY2(contains(text, "ABI version 999, this host needs " + std::to_string(kAbiVersion)),
                 text.c_str());
        QVERIFY(loader.names().empty());
    }

    void nameMismatchOnLoadByName()
    {
        PluginLoader loader({}, {kDir});
        auto entry = loader.load("fakecopy");
        QCOMPARE(entry.status().code(), Errc::invalid_argument);
        QVERIFY2(contains(entry.status().message(), "declares the name 'fake'"),
                 entry.status().message().c_str());
    }

    void loadAllKeepsTheGoodOnes()
    {
        QTemporaryDir junkDir;
        QVERIFY(junkDir.isValid());
        const std::string junk = junkDir.path().toStdString() + "/liblutra-transport-junk.so";
        std::ofstream(junk) << "not an ELF file";

        Captured log;
        PluginLoader loader({&capture, &log}, {kDir, junkDir.path().toStdString()});
        const auto errors = loader.loadAll();
        QCOMPARE(loader.names(), std::vector<std::string>{"fake"});
        QCOMPARE(errors.size(), std::size_t(4)); // badabi, fakecopy, nosym, junk
        QCOMPARE(log.lines.size(), errors.size());

        std::string all;
        for (const auto &error : errors) {
            all += error.toString() + "\n";
        }
        QVERIFY2(contains(all, "already_exists: transport plugin 'fake' (" + kDir +
                                   "/liblutra-transport-fakecopy.so): duplicate plugin name, "
                                   "already loaded from " +
                                   kDir + "/liblutra-transport-fake.so"),
                 all.c_str());
        QVERIFY2(contains(all, "ABI version 999"), all.c_str());
        QVERIFY2(contains(all, "no entry point"), all.c_str());
        QVERIFY2(contains(all, "'junk' (" + junk + "): cannot load"), all.c_str());
        // The host goes on with what loaded.
        QVERIFY(loader.load("fake").ok());
    }

    void injectedPluginNeedsNoFile()
    {
        static const PluginEntry entry{kAbiVersion, "fake", "in-process", &createNothing};
        PluginLoader loader({}, {});
        QVERIFY(loader.registerPlugin(entry).ok());
        auto found = loader.load("fake");
        QVERIFY(found.ok());
        QCOMPARE(*found, &entry);
        QCOMPARE(loader.origin("fake"), std::string("(in-process)"));

        // A file declaring the same name is then a duplicate, reported, not fatal.
        const auto status = loader.loadFile(kDir + "/liblutra-transport-fake.so");
        QCOMPARE(status.code(), Errc::already_exists);
        QVERIFY2(contains(status.message(), "already loaded from (in-process)"),
                 status.message().c_str());

        static const PluginEntry wrongAbi{kAbiVersion + 1, "other", "", &createNothing};
        QCOMPARE(loader.registerPlugin(wrongAbi).code(), Errc::failed_precondition);
        static const PluginEntry noFactory{kAbiVersion, "other", "", nullptr};
        QCOMPARE(loader.registerPlugin(noFactory).code(), Errc::invalid_argument);
    }

    void searchPathFromEnvironment()
    {
        qputenv("LUTRA_PLUGIN_PATH", "/a::/b/c:");
        QCOMPARE(defaultSearchPath(), (std::vector<std::string>{"/a", "/b/c"}));
        qunsetenv("LUTRA_PLUGIN_PATH");
        const auto fallback = defaultSearchPath();
        // Next to this program first (<build>/bin -> <build>/lib), the install directory last.
        QCOMPARE(fallback.size(), std::size_t(3));
        const std::filesystem::path bin = QCoreApplication::applicationDirPath().toStdString();
        QCOMPARE(fallback[0], (bin.parent_path() / "lib").string());
        QVERIFY2(contains(fallback[2], "lutra/plugins"), fallback[2].c_str());
    }
};

QTEST_GUILESS_MAIN(TestTransportLoader)
#include "test_transport_loader.moc"
