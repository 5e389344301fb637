// Store files: creation, migrations (empty file, v1 file), refusing newer, corrupt and foreign
// files with errors that name the file, desired parameters across reopen, clean close.
#include "store/schema.h"
#include "store_test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;
namespace fs = std::filesystem;

class TestStoreSchema : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    std::string path(const char *name) const
    {
        return (fs::path(m_dir.path().toStdString()) / name).string();
    }

    static DesiredParam desired(std::string pattern, std::string value)
    {
        return {std::move(pattern), std::move(value), "set_param"};
    }

    static std::vector<std::string> patterns(const std::vector<DesiredEntry> &entries)
    {
        std::vector<std::string> result;
        result.reserve(entries.size());
        for (const auto &entry : entries) {
            result.push_back(entry.param.pattern + "=" + entry.param.value);
        }
        return result;
    }

private slots:
    void createsTheCurrentSchemaInWalMode()
    {
        const std::string file = path("fresh.db");
        const mode_t mask = ::umask(022);
        auto store = Store::open(file);
        ::umask(mask);
        LUTRA_VERIFY_OK(store);
        QCOMPARE((*store)->schemaVersion(), schema::currentVersion());
        QCOMPARE(schema::currentVersion(), 3);
        QCOMPARE(rawInt(file, "PRAGMA user_version"), 3);
        QCOMPARE(rawInt(file, "PRAGMA application_id"), schema::kApplicationId);
        QCOMPARE(
            rawInt(file, "SELECT count(*) FROM pragma_journal_mode WHERE journal_mode = 'wal'"), 1);
        struct stat info {};
        QCOMPARE(::stat(file.c_str(), &info), 0);
        QCOMPARE(info.st_mode & 0777, mode_t(0640));
    }

    void migratesAnEmptyFile()
    {
        const std::string file = path("empty.db");
        std::ofstream(file).close();
        QCOMPARE(fs::file_size(file), std::uintmax_t(0));
        auto store = Store::open(file);
        LUTRA_VERIFY_OK(store);
        QCOMPARE(rawInt(file, "PRAGMA user_version"), 3);
        QCOMPARE(rawInt(file, "SELECT count(*) FROM sqlite_schema WHERE name = 'counter_buckets'"),
                 1);
    }

    void migratesAVersion1FileKeepingItsData()
    {
        const std::string file = path("v1.db");
        {
            auto connection =
                sqlite::Connection::open(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
            LUTRA_VERIFY_OK(connection);
            LUTRA_VERIFY_OK(schema::migrate(*connection, 1));
            // What a version-1 ctld wrote: a point with a change, a desired parameter, a profile.
            LUTRA_VERIFY_OK(connection->exec(
                "INSERT INTO history_points VALUES (1, 1700000000000000000, 1700000000000000000, "
                "'node01', 'token:alice', 'set', 'one set', '', 'ok', '');"
                "INSERT INTO history_changes VALUES (1, 1, 'target-ost0', "
                "'osc.ost0.max_pages_per_rpc', '256', '1024', '1024', 'ok', '');"
                "INSERT INTO desired_params VALUES (1, 'osc.*.max_pages_per_rpc', '1024', "
                "'set_param', 'token:alice', 1700000000000000000, 1);"
                "INSERT INTO profiles VALUES ('hpc', 'name: hpc', 'token:alice', 1);"));
        }
        QCOMPARE(rawInt(file, "PRAGMA user_version"), 1);
        QCOMPARE(rawInt(file, "SELECT count(*) FROM sqlite_schema WHERE name = 'counter_buckets'"),
                 0);

        auto store = Store::open(file);
        LUTRA_VERIFY_OK(store);
        QCOMPARE(rawInt(file, "PRAGMA user_version"), 3);
        auto detail = (*store)->point(1);
        LUTRA_VERIFY_OK(detail);
        QCOMPARE(detail->point.principal, std::string("token:alice"));
        QCOMPARE(detail->changes.size(), std::size_t(1));
        QCOMPARE(detail->changes[0].readBack, std::string("1024"));
        auto desiredList = (*store)->listDesired();
        LUTRA_VERIFY_OK(desiredList);
        QCOMPARE(patterns(*desiredList), std::vector<std::string>{"osc.*.max_pages_per_rpc=1024"});
        auto profile = (*store)->profile("hpc");
        LUTRA_VERIFY_OK(profile);
        QCOMPARE(profile->text, std::string("name: hpc"));
        // The version-2 tables work.
        const std::vector<CounterValue> values{{"llite.lutra.read_ahead_stats.hits", 5}};
        LUTRA_VERIFY_OK((*store)->recordSamples("bench-b0", at(1), values));
        LUTRA_VERIFY_OK((*store)->flushSamples(at(2)));
        QCOMPARE(rawInt(file, "SELECT count(*) FROM counter_buckets"), 1);
        // A new point continues after the old ones.
        auto point = (*store)->recordPoint(draft("token:bob", 5, Action::set), Outcome::ok, {}, {});
        LUTRA_VERIFY_OK(point);
        QCOMPARE(*point, PointId(2));
    }

    void refusesANewerDatabaseUnchanged()
    {
        const std::string file = path("newer.db");
        {
            auto store = Store::open(file);
            LUTRA_VERIFY_OK(store);
        }
        rawExec(file, "PRAGMA user_version = 9");
        auto store = Store::open(file);
        QVERIFY(!store.ok());
        QCOMPARE(store.status().code(), Errc::failed_precondition);
        const std::string message = store.status().message();
        QVERIFY2(message.find(file) == 0, message.c_str());
        QVERIFY2(message.find("schema version 9 is newer than this lutra-ctld knows (3)") !=
                     std::string::npos,
                 message.c_str());
        QCOMPARE(rawInt(file, "PRAGMA user_version"), 9);
    }

    void refusesAFileThatIsNotSqlite()
    {
        const std::string file = path("garbage.db");
        {
            std::ofstream out(file, std::ios::binary);
            for (int i = 0; i < 512; ++i) {
                out << "this is not a database ";
            }
        }
        const auto size = fs::file_size(file);
        auto store = Store::open(file);
        QVERIFY(!store.ok());
        QCOMPARE(store.status().code(), Errc::io_error);
        const std::string message = store.status().message();
        QVERIFY2(message.find(file + ": open: read the file header: file is not a database") == 0,
                 message.c_str());
        QCOMPARE(fs::file_size(file), size);
    }

    void refusesAnotherApplicationsDatabase()
    {
        const std::string file = path("foreign.db");
        rawExec(file, "CREATE TABLE photos (id INTEGER PRIMARY KEY)");
        auto store = Store::open(file);
        QVERIFY(!store.ok());
        QCOMPARE(store.status().code(), Errc::failed_precondition);
        QVERIFY2(store.status().message().find(file + ": open: not a lutra-ctld database") == 0,
                 store.status().message().c_str());
        QCOMPARE(rawInt(file, "SELECT count(*) FROM sqlite_schema"), 1);
        QCOMPARE(rawInt(file, "PRAGMA user_version"), 0);
    }

    void openErrorsNameThePath()
    {
        const std::string file = path("no/such/dir/ctld.db");
        auto store = Store::open(file);
        QVERIFY(!store.ok());
        QCOMPARE(store.status().code(), Errc::io_error);
        QVERIFY2(store.status().message().find(file + ": open: create: ") == 0,
                 store.status().message().c_str());
        QCOMPARE(Store::open("").status().code(), Errc::invalid_argument);
    }

    void desiredParametersRoundTripAndSurviveReopen()
    {
        const std::string file = path("desired.db");
        {
            auto store = Store::open(file);
            LUTRA_VERIFY_OK(store);
            Store &db = **store;
            DesiredUpdate first{{desired("osc.ost0.max_pages_per_rpc", "256"),
                                 desired("llite.*.max_read_ahead_mb", "64"),
                                 desired("osc.ost1.max_pages_per_rpc", "128")},
                                {}};
            LUTRA_VERIFY_OK(
                db.recordPoint(draft("token:alice", 1, Action::set), Outcome::ok, {}, {}, first));
            // Re-setting a pattern replaces it and moves it to the end of the replay order.
            LUTRA_VERIFY_OK(db.recordPoint(draft("token:bob", 2, Action::set), Outcome::ok, {}, {},
                                           {{desired("llite.*.max_read_ahead_mb", "256")}, {}}));
            auto list = db.listDesired();
            LUTRA_VERIFY_OK(list);
            QCOMPARE(patterns(*list), (std::vector<std::string>{"osc.ost0.max_pages_per_rpc=256",
                                                                "osc.ost1.max_pages_per_rpc=128",
                                                                "llite.*.max_read_ahead_mb=256"}));
            QCOMPARE(list->back().principal, std::string("token:bob"));
            QCOMPARE(list->back().time, at(2));
            QCOMPARE(list->back().point, PointId(2));
            QCOMPARE(list->front().param.source, std::string("set_param"));

            // A later glob covering exact names makes their entries dead: they go.
            LUTRA_VERIFY_OK(
                db.recordPoint(draft("token:carol", 3, Action::set), Outcome::ok, {}, {},
                               {{desired("osc.{ost0,ost2}.max_pages_per_rpc", "512")}, {}}));
            list = db.listDesired();
            LUTRA_VERIFY_OK(list);
            QCOMPARE(patterns(*list),
                     (std::vector<std::string>{"osc.ost1.max_pages_per_rpc=128",
                                               "llite.*.max_read_ahead_mb=256",
                                               "osc.{ost0,ost2}.max_pages_per_rpc=512"}));

            // Removal; an absent pattern is ignored.
            LUTRA_VERIFY_OK(db.recordPoint(draft("token:alice", 4, Action::unset), Outcome::ok, {},
                                           {}, {{}, {"osc.ost1.max_pages_per_rpc", "nope.*"}}));

            // A bad pattern is refused with its column, and nothing is recorded.
            auto bad =
                db.recordPoint(draft("token:alice", 5, Action::set), Outcome::ok, {}, {},
                               {{desired("osc.ost9.x", "1"), desired("osc.[ost.x", "1")}, {}});
            QVERIFY(!bad.ok());
            QCOMPARE(bad.status().code(), Errc::invalid_argument);
            QVERIFY2(bad.status().message().find(file + ": record set: desired parameter 2: "
                                                        "pattern 'osc.[ost.x': ") == 0,
                     bad.status().message().c_str());
            auto missingPrincipal =
                db.recordPoint(draft("", 5, Action::set), Outcome::ok, {}, {}, {});
            QCOMPARE(missingPrincipal.status().code(), Errc::invalid_argument);
            QVERIFY2(missingPrincipal.status().message().find("principal: must not be empty") !=
                         std::string::npos,
                     missingPrincipal.status().message().c_str());
            auto page = db.history({});
            LUTRA_VERIFY_OK(page);
            QCOMPARE(page->points.size(), std::size_t(4));
        }
        auto reopened = Store::open(file);
        LUTRA_VERIFY_OK(reopened);
        auto list = (*reopened)->listDesired();
        LUTRA_VERIFY_OK(list);
        QCOMPARE(patterns(*list),
                 (std::vector<std::string>{"llite.*.max_read_ahead_mb=256",
                                           "osc.{ost0,ost2}.max_pages_per_rpc=512"}));
    }

    void closeCheckpointsAndLaterCallsFail()
    {
        const std::string file = path("close.db");
        auto store = Store::open(file);
        LUTRA_VERIFY_OK(store);
        LUTRA_VERIFY_OK(
            (*store)->recordPoint(draft("token:alice", 1, Action::set), Outcome::ok, {}, {}));
        QVERIFY(fs::exists(file + "-wal"));
        LUTRA_VERIFY_OK((*store)->close());
        QVERIFY(!fs::exists(file + "-wal"));
        QCOMPARE(rawInt(file, "SELECT count(*) FROM history_points"), 1);
        auto list = (*store)->listDesired();
        QCOMPARE(list.status().code(), Errc::failed_precondition);
        QCOMPARE(list.status().message(), file + ": list desired parameters: the store is closed");
        QCOMPARE((*store)
                     ->recordPoint(draft("token:alice", 2, Action::set), Outcome::ok, {}, {})
                     .status()
                     .code(),
                 Errc::failed_precondition);
        const std::vector<CounterValue> values{{"c", 1}};
        QCOMPARE((*store)->recordSamples("i", at(1), values).code(), Errc::failed_precondition);
        QCOMPARE((*store)->close().code(), Errc::failed_precondition);
    }
};

QTEST_GUILESS_MAIN(TestStoreSchema)
#include "test_store_schema.moc"
