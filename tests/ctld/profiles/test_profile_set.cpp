// Profile sets: loading a directory, `extends` (order, overrides, diamonds, unknown parents,
// cycles) and which nodes a profile is for (hostlists, globs, labels).
#include "ctld/profiles/node_pattern.h"
#include "ctld/profiles/profile_set.h"

#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace lutra;
using namespace lutra::ctld::profiles;

namespace {

QStringList texts(const Diagnostics &diagnostics)
{
    QStringList list;
    for (const auto &diagnostic : diagnostics) {
        list << QString::fromStdString(diagnostic.toString());
    }
    return list;
}

// "pattern=value@file:line:col" for each effective entry.
QStringList entries(const std::vector<ParamEntry> &params)
{
    QStringList list;
    for (const auto &entry : params) {
        list << QString::fromStdString(entry.pattern + "=" + entry.value + "@" +
                                       entry.location.toString());
    }
    return list;
}

void add(ProfileSet &set, const char *source, const char *yaml)
{
    const auto errors = set.addText(yaml, source);
    QVERIFY2(errors.empty(), qPrintable(texts(errors).join('\n')));
}

QStringList qlist(const std::vector<std::string> &strings)
{
    QStringList list;
    for (const auto &s : strings) {
        list << QString::fromStdString(s);
    }
    return list;
}

bool nodeMatches(const char *pattern, const char *node)
{
    auto compiled = NodePattern::compile(pattern);
    if (!compiled) {
        qWarning("%s", compiled.status().message().c_str());
        return false;
    }
    return compiled->matches(node);
}

} // namespace

class TestProfileSet : public QObject {
    Q_OBJECT

private slots:
    void childOverridesParentsAndComesLast()
    {
        ProfileSet set;
        add(set, "base.yaml",
            "name: base\n"
            "params:\n"
            "  osc.*.max_dirty_mb: 512\n"
            "  osc.ost0.max_dirty_mb: 1024\n"
            "  osc.*.checksums: on\n");
        add(set, "child.yaml",
            "name: child\n"
            "extends: base\n"
            "params:\n"
            "  llite.*.max_read_ahead_mb: 2048\n"
            "  osc.*.max_dirty_mb: 256\n");
        const Resolved resolved = set.resolve("child");
        QVERIFY(resolved.ok());
        QCOMPARE(qlist(resolved.chain), (QStringList{"base", "child"}));
        // The child's osc.*.max_dirty_mb replaces the parent's and goes last, so it also wins
        // over the parent's more specific osc.ost0 entry: the child always has the last word.
        QCOMPARE(entries(resolved.params), (QStringList{
                                               "osc.ost0.max_dirty_mb=1024@base.yaml:4:3",
                                               "osc.*.checksums=on@base.yaml:5:3",
                                               "llite.*.max_read_ahead_mb=2048@child.yaml:4:3",
                                               "osc.*.max_dirty_mb=256@child.yaml:5:3",
                                           }));
    }

    void parentsApplyInListedOrderAndADiamondOnce()
    {
        ProfileSet set;
        add(set, "root.yaml", "name: root\nparams:\n  a: root\n  b: root\n  c: root\n");
        add(set, "left.yaml", "name: left\nextends: root\nparams:\n  a: left\n");
        add(set, "right.yaml", "name: right\nextends: root\nparams:\n  a: right\n  b: right\n");
        add(set, "leaf.yaml", "name: leaf\nextends: [left, right]\nparams:\n  c: leaf\n");
        const Resolved resolved = set.resolve("leaf");
        QVERIFY(resolved.ok());
        QCOMPARE(qlist(resolved.chain), (QStringList{"root", "left", "right", "leaf"}));
        // root applies once (first), so left's override of it is not undone by reaching root
        // again through right; right, listed later, wins over left.
        QCOMPARE(entries(resolved.params), (QStringList{
                                               "a=right@right.yaml:4:3",
                                               "b=right@right.yaml:5:3",
                                               "c=leaf@leaf.yaml:4:3",
                                           }));
    }

    void unknownParentIsReportedAtTheExtendsLine()
    {
        ProfileSet set;
        add(set, "base.yaml", "name: base\n");
        add(set, "child.yaml", "name: child\nextends: [base, basee, other]\n");
        const Resolved resolved = set.resolve("child");
        QCOMPARE(texts(resolved.errors),
                 (QStringList{
                     "child.yaml:2:17: unknown profile 'basee' in extends (did you mean base?)",
                     "child.yaml:2:24: unknown profile 'other' in extends",
                 }));
        QCOMPARE(resolved.errors.front().code, Errc::not_found);
        QCOMPARE(texts(set.resolve("nothere").errors),
                 QStringList{"profile:nothere: no profile named 'nothere'"});
    }

    void cyclesAreReportedWithTheirChain()
    {
        ProfileSet set;
        add(set, "a.yaml", "name: a\nextends: b\nparams:\n  x: 1\n");
        add(set, "b.yaml", "name: b\nextends: [c]\n");
        add(set, "c.yaml", "name: c\nextends:\n  - a\n");
        add(set, "self.yaml", "name: self\nextends: self\n");
        QCOMPARE(texts(set.resolve("a").errors),
                 QStringList{"c.yaml:3:5: cycle in extends: a -> b -> c -> a"});
        QCOMPARE(texts(set.resolve("b").errors),
                 QStringList{"a.yaml:2:10: cycle in extends: b -> c -> a -> b"});
        QCOMPARE(texts(set.resolve("self").errors),
                 QStringList{"self.yaml:2:10: cycle in extends: self -> self"});
        // Checking the whole set reports each cycle once.
        QCOMPARE(texts(set.checkExtends()),
                 (QStringList{"c.yaml:3:5: cycle in extends: a -> b -> c -> a",
                              "self.yaml:2:10: cycle in extends: self -> self"}));
    }

    void tooDeepInheritanceIsRefused()
    {
        ProfileSet set;
        add(set, "p0.yaml", "name: p0\n");
        for (int i = 1; i <= 40; ++i) {
            const std::string yaml =
                "name: p" + std::to_string(i) + "\nextends: p" + std::to_string(i - 1) + "\n";
            const std::string source = "p" + std::to_string(i) + ".yaml";
            QVERIFY(set.addText(yaml, source).empty());
        }
        QVERIFY(set.resolve("p31").ok()); // p31 … p0: 32 profiles
        QCOMPARE(texts(set.resolve("p32").errors),
                 QStringList{"p1.yaml:2:10: extends chain is deeper than 32 profiles"});
        QCOMPARE(texts(set.resolve("p40").errors),
                 QStringList{"p9.yaml:2:10: extends chain is deeper than 32 profiles"});
    }

    void duplicateNamesAreRefused()
    {
        ProfileSet set;
        add(set, "one.yaml", "name: base\n");
        QCOMPARE(texts(set.addText("# again\nname: base\n", "two.yaml")),
                 QStringList{"two.yaml:2:7: profile 'base' is already defined at one.yaml:1:7"});
        QCOMPARE(set.size(), 1u);
    }

    void loadsADirectoryAndReportsEveryBrokenFile()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto write = [&dir](const char *name, const char *text) {
            std::ofstream(dir.filePath(name).toStdString()) << text;
        };
        write("a.yaml", "name: a\nparams:\n  x: 1\n");
        write("b.yml", "name: b\nextends: a\n");
        write("broken.yaml", "name: c\nparams: [\n");
        write("notes.txt", "not a profile\n");
        ProfileSet set;
        const QStringList errors = texts(set.loadDirectory(dir.path().toStdString()));
        QCOMPARE(errors, QStringList{dir.filePath("broken.yaml") +
                                     ":3:1: YAML syntax error: end of sequence flow not found"});
        QCOMPARE(qlist(set.names()), (QStringList{"a", "b"}));

        QCOMPARE(texts(set.loadDirectory("/nonexistent/profiles")),
                 QStringList{"/nonexistent/profiles: cannot read profile directory: No such file "
                             "or directory"});
    }

    void hostlistRanges()
    {
        QVERIFY(nodeMatches("node[01-64]", "node01"));
        QVERIFY(nodeMatches("node[01-64]", "node64"));
        QVERIFY(nodeMatches("node[01-64]", "node10"));
        QVERIFY(!nodeMatches("node[01-64]", "node65"));
        QVERIFY(!nodeMatches("node[01-64]", "node00"));
        QVERIFY(!nodeMatches("node[01-64]", "node7")); // the padding is part of the name
        QVERIFY(!nodeMatches("node[01-64]", "node007"));
        QVERIFY(!nodeMatches("node[01-64]", "node01x"));
        QVERIFY(nodeMatches("c[1-10]", "c1"));
        QVERIFY(nodeMatches("c[1-10]", "c10"));
        QVERIFY(!nodeMatches("c[1-10]", "c01"));
        QVERIFY(nodeMatches("gpu[1-4,8]", "gpu8"));
        QVERIFY(!nodeMatches("gpu[1-4,8]", "gpu5"));
        QVERIFY(nodeMatches("rack[1-2]n[01-16]", "rack2n16"));
        QVERIFY(!nodeMatches("rack[1-2]n[01-16]", "rack3n16"));
        QVERIFY(nodeMatches("n[1-3]0", "n20")); // a range followed by digits
        QVERIFY(nodeMatches("n[1-20]-ib", "n12-ib"));
        QVERIFY(nodeMatches("*[01-04]", "compute03"));
        QVERIFY(nodeMatches("x[0-9]", "x7")); // same as the glob class
    }

    void globsAndClasses()
    {
        QVERIFY(nodeMatches("login*", "login1"));
        QVERIFY(nodeMatches("login*", "login"));
        QVERIFY(!nodeMatches("login*", "xlogin1"));
        QVERIFY(nodeMatches("io?", "io3"));
        QVERIFY(nodeMatches("node[a-c]1", "nodeb1"));
        QVERIFY(!nodeMatches("node[!a-c]1", "nodeb1"));
        QVERIFY(nodeMatches("n\\[1\\]", "n[1]"));
        QVERIFY(nodeMatches("exact.example.org", "exact.example.org"));
        QVERIFY(!nodeMatches("exact", "exactly"));
    }

    void badNodePatterns()
    {
        const auto message = [](const char *pattern) {
            return QString::fromStdString(NodePattern::compile(pattern).status().message());
        };
        QCOMPARE(message("node[5-1]"),
                 "bad node pattern 'node[5-1]' at column 6: range 5-1 is empty (low > high)");
        QCOMPARE(message("node[1-2-3]"), "bad node pattern 'node[1-2-3]' at column 6: a hostlist "
                                         "range is N or N-M, separated by commas");
        QCOMPARE(message("node[1,,2]"), "bad node pattern 'node[1,,2]' at column 8: a hostlist "
                                        "range is N or N-M, separated by commas");
        QCOMPARE(message("node[01"), "bad node pattern 'node[01' at column 5: '[' is not closed");
        QCOMPARE(message("node]"), "bad node pattern 'node]' at column 5: ']' without '['");
        QCOMPARE(message("n[1234567890123456789]"),
                 "bad node pattern 'n[1234567890123456789]' at column 3: number too large");
        QCOMPARE(message(""), "empty node pattern");
    }

    void splitsAHostlistString()
    {
        const auto items = splitHostlist("node[01-04,08], login1 ,gpu[1-2]");
        QCOMPARE(items.size(), 3u);
        QCOMPARE(items[0].first, "node[01-04,08]");
        QCOMPARE(items[0].second, 0u);
        QCOMPARE(items[1].first, "login1");
        QCOMPARE(items[1].second, 16u);
        QCOMPARE(items[2].first, "gpu[1-2]");
    }

    void profilesMatchNodesByNameAndLabels()
    {
        ProfileSet set;
        add(set, "all.yaml", "name: all\n");
        add(set, "compute.yaml",
            "name: compute\nmatch:\n  nodes: node[01-64],gpu*\n  labels: {role: compute}\n");
        add(set, "rack.yaml", "name: rack\nmatch:\n  labels:\n    rack: r12\n    role: compute\n");
        add(set, "login.yaml", "name: login\nmatch:\n  nodes:\n    - login[1-2]\n");
        const Labels compute{{"role", "compute"}, {"rack", "r12"}};
        QCOMPARE(qlist(set.matching("node07", compute)), (QStringList{"all", "compute", "rack"}));
        QCOMPARE(qlist(set.matching("gpu3", {{"role", "compute"}})),
                 (QStringList{"all", "compute"}));
        QCOMPARE(qlist(set.matching("node07", {{"role", "io"}})), QStringList{"all"});
        QCOMPARE(qlist(set.matching("node99", compute)), (QStringList{"all", "rack"}));
        QCOMPARE(qlist(set.matching("login2", {})), (QStringList{"all", "login"}));
        QCOMPARE(qlist(set.matching("login3", {})), QStringList{"all"});
    }
};

QTEST_GUILESS_MAIN(TestProfileSet)
#include "test_profile_set.moc"
