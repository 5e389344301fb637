// Profiles through lutra-ctld as a user meets them: two files in profiles_dir that extend each
// other are listed with the cycle as an error, and a stored profile can be deleted (audited).
#include "ctld_node.h"

#include <QJsonArray>

using namespace lutra::test;

class TestCtldProfiles : public QObject {
    Q_OBJECT

    std::unique_ptr<CtldNode> m_node;

private slots:
    void initTestCase()
    {
        m_node = std::make_unique<CtldNode>();
        QVERIFY(m_node->ready());
    }
    void cleanupTestCase() { m_node.reset(); }
    void init() { m_node->freshDatabase(); }

    void listingShowsAnExtendsCycle()
    {
        const QString dir = m_node->dir() + "/cycle-profiles";
        std::filesystem::create_directories(dir.toStdString());
        std::ofstream((dir + "/cycle-a.yaml").toStdString())
            << "name: cycle-a\nextends: [cycle-b]\nparams:\n  llite.*.max_read_ahead_mb: 32\n";
        std::ofstream((dir + "/cycle-b.yaml").toStdString())
            << "name: cycle-b\nextends: [cycle-a]\nparams:\n  llite.*.max_read_ahead_mb: 16\n";
        m_node->setProfilesDir(dir);
        auto ctld = m_node->startCtld();
        m_node->setProfilesDir({});
        QVERIFY(ctld);
        auto list = m_node->lutractl({"profiles"});
        QVERIFY2(list.out.contains("error: ") && list.out.contains("cycle"),
                 qPrintable(list.out + list.err));
        QCOMPARE(ctld->stop(), 0);
    }

    void inlineDocumentsAreNamedAfterTheirFile()
    {
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        const QString file = m_node->dir() + "/local.yaml";
        std::ofstream(file.toStdString()) << "name: local\nparams:\n"
                                             "  llite.*.max_read_ahead_mb: 24\n";
        auto diff = m_node->lutractl({"diff", "--file", file});
        QVERIFY2(diff.exitCode == 0, qPrintable(diff.out + diff.err));
        QVERIFY2(diff.out.contains("(" + file + ":3:3)") && !diff.out.contains("inline"),
                 qPrintable(diff.out));

        const QString broken = m_node->dir() + "/broken.yaml";
        std::ofstream(broken.toStdString()) << "name: [\n";
        auto bad = m_node->lutractl({"diff", "--file", broken});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("profile " + broken + ": 1 error(s)"), qPrintable(bad.err));
        QCOMPARE(ctld->stop(), 0);
    }

    void storedCycleIsReportedAtTheGivenFile()
    {
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        auto put = [&](const QString &file, const std::string &text) {
            std::ofstream((m_node->dir() + "/" + file).toStdString()) << text;
            return m_node->lutractl({"put-profile", m_node->dir() + "/" + file});
        };
        const std::string params = "params:\n  llite.*.max_read_ahead_mb: 16\n";
        QCOMPARE(put("b.yaml", "name: cyc-b\n" + params).exitCode, 0);
        QCOMPARE(put("a.yaml", "name: cyc-a\nextends: [cyc-b]\n" + params).exitCode, 0);
        auto cycle = put("b2.yaml", "name: cyc-b\nextends: [cyc-a]\n" + params);
        QCOMPARE(cycle.exitCode, 1);
        const QString text = cycle.out + cycle.err;
        QVERIFY2(text.contains(m_node->dir() + "/b2.yaml:2:") && text.contains("cycle"),
                 qPrintable(text));
        QCOMPARE(ctld->stop(), 0);
    }

    void storedProfileCanBeDeleted()
    {
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        const QString file = m_node->dir() + "/mine.yaml";
        std::ofstream(file.toStdString()) << "name: mine\nparams:\n"
                                             "  llite.*.max_read_ahead_mb: 32\n";
        QCOMPARE(m_node->lutractl({"put-profile", file}).exitCode, 0);
        QVERIFY(m_node->lutractl({"profiles"}).out.contains("mine"));

        auto deleted = m_node->lutractl({"delete-profile", "mine"});
        QVERIFY2(deleted.exitCode == 0, qPrintable(deleted.out + deleted.err));
        QVERIFY(!m_node->lutractl({"profiles"}).out.contains("mine"));
        const auto history = jsonOf(m_node->lutractl({"--json", "history", "--limit", "1"}));
        const auto point = history["nodes"]
                               .toArray()[0]
                               .toObject()["result"]
                               .toObject()["points"]
                               .toArray()[0]
                               .toObject();
        QCOMPARE(point["action"].toString(), QString("profile_delete"));

        auto again = m_node->lutractl({"delete-profile", "mine"});
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.contains("no stored profile 'mine'"), qPrintable(again.err));
        QCOMPARE(ctld->stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestCtldProfiles)
#include "test_ctld_profiles.moc"
