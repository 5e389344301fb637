// Reading profiles: every field, every kind of structural error with its exact text and
// file:line:column, and all errors of a file at once.
#include "ctld/profiles/parser.h"

#include <QStringList>
#include <QTest>

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

QStringList errorsOf(const char *yaml)
{
    return texts(parseProfile(yaml, "t.yaml").errors);
}

QString at(const Location &location)
{
    return QString::fromStdString(location.toString());
}

} // namespace

class TestProfileParser : public QObject {
    Q_OBJECT

private slots:
    void readsEveryField()
    {
        const auto result = parseProfile("name: compute\n"
                                         "description: Compute nodes\n"
                                         "extends: [base, site]\n"
                                         "match:\n"
                                         "  nodes: node[01-64],login*\n"
                                         "  labels: {role: compute, rack: r12}\n"
                                         "params:\n"
                                         "  osc.*.max_pages_per_rpc: 16M\n"
                                         "  llite.*.max_read_ahead_mb: 2048\n"
                                         "  osc.*.checksums: on\n"
                                         "  ldlm.namespaces.*.lru_size: \"clear\"\n",
                                         "/etc/lutra/profiles/compute.yaml");
        QVERIFY2(result.ok(), qPrintable(texts(result.errors).join('\n')));
        const Profile &p = result.profile;
        QCOMPARE(p.name, "compute");
        QCOMPARE(p.description, "Compute nodes");
        QCOMPARE(p.source, "/etc/lutra/profiles/compute.yaml");
        QCOMPARE(at(p.location), "/etc/lutra/profiles/compute.yaml:1:7");
        QCOMPARE(p.extends.size(), 2u);
        QCOMPARE(p.extends[0].name, "base");
        QCOMPARE(at(p.extends[0].location), "/etc/lutra/profiles/compute.yaml:3:11");
        QCOMPARE(p.extends[1].name, "site");
        QCOMPARE(at(p.extends[1].location), "/etc/lutra/profiles/compute.yaml:3:17");
        QVERIFY(p.match.has_value());
        QCOMPARE(p.match->nodes.size(), 2u);
        QCOMPARE(p.match->nodes[0].text(), "node[01-64]");
        QCOMPARE(p.match->nodes[1].text(), "login*");
        QCOMPARE(p.match->labels, (Labels{{"rack", "r12"}, {"role", "compute"}}));

        // In the order written, values as written, with where each was written.
        QCOMPARE(p.params.size(), 4u);
        QCOMPARE(p.params[0].pattern, "osc.*.max_pages_per_rpc");
        QCOMPARE(p.params[0].value, "16M");
        QCOMPARE(at(p.params[0].location), "/etc/lutra/profiles/compute.yaml:8:3");
        QCOMPARE(at(p.params[0].valueLocation), "/etc/lutra/profiles/compute.yaml:8:28");
        QCOMPARE(p.params[1].pattern, "llite.*.max_read_ahead_mb");
        QCOMPARE(p.params[1].value, "2048");
        QCOMPARE(p.params[2].value, "on");
        QCOMPARE(p.params[3].value, "clear"); // structure only: actions are refused by validation
    }

    void extendsMayBeOneNameAndEverythingButNameIsOptional()
    {
        auto result = parseProfile("name: child\nextends: base\n", "profile:child");
        QVERIFY(result.ok());
        QCOMPARE(result.profile.extends.size(), 1u);
        QCOMPARE(result.profile.extends[0].name, "base");
        QCOMPARE(at(result.profile.extends[0].location), "profile:child:2:10");
        QVERIFY(!result.profile.match.has_value());
        QVERIFY(result.profile.params.empty());

        result = parseProfile("name: empty\nparams:\n", "e.yaml");
        QVERIFY(result.ok());
        QVERIFY(result.profile.params.empty());
    }

    void reportsEveryErrorOfAFileInOrder()
    {
        QCOMPARE(errorsOf("name: bad profile\n"
                          "descrption: typo\n"
                          "params:\n"
                          "  osc.*.checksums: [1]\n"
                          "  llite.*.fast_read:\n"
                          "  osc.*.checksums: 0\n"
                          "match: compute\n"
                          "params: {}\n"),
                 (QStringList{
                     "t.yaml:1:7: profile name 'bad profile' may use only letters, digits, '.', "
                     "'_' and '-' (at most 64 characters, not starting with '.' or '-')",
                     "t.yaml:2:1: unknown key 'descrption' (expected name, description, extends, "
                     "match or params; did you mean description?)",
                     "t.yaml:4:20: value of 'osc.*.checksums' must be a scalar (a number, size "
                     "or word), found a list",
                     "t.yaml:5:3: no value for 'llite.*.fast_read'",
                     "t.yaml:6:3: duplicate parameter 'osc.*.checksums' (first at line 4)",
                     "t.yaml:7:8: 'match' must be a mapping with nodes and/or labels, found a "
                     "scalar",
                     "t.yaml:8:1: duplicate key 'params' (first at line 3)",
                 }));
    }

    void yamlSyntaxErrorsCarryTheParsersPosition()
    {
        QCOMPARE(errorsOf("name: x\nparams:\n  osc.*.checksums: [1, 2\n"),
                 QStringList{"t.yaml:4:1: YAML syntax error: end of sequence flow not found"});
        QCOMPARE(errorsOf("name: x\nparams:\n  a: 1\n b: 2\n"),
                 QStringList{"t.yaml:4:2: YAML syntax error: end of map not found"});
        QCOMPARE(
            errorsOf("name: x\n\tparams: 1\n"),
            QStringList{"t.yaml:2:1: YAML syntax error: illegal tab when looking for indentation"});
    }

    void documentLevelErrors()
    {
        QCOMPARE(errorsOf(""), QStringList{"t.yaml:1:1: empty profile: expected a mapping with "
                                           "name, description, extends, match and params"});
        QCOMPARE(errorsOf("# only a comment\n"),
                 QStringList{"t.yaml:1:1: empty profile: expected a mapping with name, "
                             "description, extends, match and params"});
        QCOMPARE(errorsOf("- name: a\n"),
                 QStringList{"t.yaml:1:1: a profile must be a mapping with name, description, "
                             "extends, match and params, found a list"});
        QCOMPARE(errorsOf("description: no name\n"), QStringList{"t.yaml:1:1: missing 'name'"});
        QVERIFY(parseProfile("%YAML 1.2\n---\nname: a\n...\n# end\n", "t.yaml").ok());
        // yaml-cpp would silently drop these; a profile with text nobody reads is refused.
        QCOMPARE(errorsOf(",\nname: x\n"),
                 QStringList{"t.yaml:1:1: YAML syntax error: unexpected ','"});
        QCOMPARE(errorsOf("- name: x\n,\n"),
                 QStringList{"t.yaml:2:1: YAML syntax error: unexpected ','"});
        QCOMPARE(errorsOf("name: a\n...\nname: b\n"),
                 QStringList{"t.yaml:3:1: a profile file holds one YAML document; a second one "
                             "starts here"});
        QCOMPARE(errorsOf("name: a\n---\nname: b\n"),
                 QStringList{"t.yaml:2:1: a profile file holds one YAML document; a second one "
                             "starts here"});
    }

    void wrongNodeTypes()
    {
        QCOMPARE(errorsOf("name: [a]\n"),
                 QStringList{"t.yaml:1:7: 'name' must be a scalar, found a list"});
        QCOMPARE(errorsOf("name: \"\"\n"), QStringList{"t.yaml:1:7: empty profile name"});
        QCOMPARE(errorsOf("name:\n"), QStringList{"t.yaml:1:1: 'name' must be a scalar, found "
                                                  "nothing"});
        QCOMPARE(errorsOf("name: a\nparams: [osc.*.checksums=0]\n"),
                 QStringList{"t.yaml:2:9: 'params' must be a mapping of parameter patterns to "
                             "values, found a list"});
        QCOMPARE(errorsOf("name: a\nparams:\n  ? [a, b]\n  : 1\n"),
                 QStringList{"t.yaml:3:5: a parameter name must be a scalar, found a list"});
        QCOMPARE(errorsOf("name: a\nparams:\n  osc.*.checksums: {on: 1}\n"),
                 QStringList{"t.yaml:3:20: value of 'osc.*.checksums' must be a scalar (a "
                             "number, size or word), found a mapping"});
        QCOMPARE(errorsOf("name: a\nparams:\n  jobid_name: |\n    two\n    lines\n"),
                 QStringList{"t.yaml:3:15: value of 'jobid_name' must be one line of text "
                             "without control characters"});
        QCOMPARE(errorsOf("name: a\nparams:\n  \"\": 1\n"),
                 QStringList{"t.yaml:3:3: empty parameter name"});
        QCOMPARE(errorsOf("name: a\ndescription: {x: 1}\n"),
                 QStringList{"t.yaml:2:14: 'description' must be a scalar, found a mapping"});
    }

    void extendsErrors()
    {
        QCOMPARE(errorsOf("name: a\nextends: {base: 1}\n"),
                 QStringList{"t.yaml:2:10: 'extends' must be a profile name or a list of them, "
                             "found a mapping"});
        QCOMPARE(errorsOf("name: a\nextends: []\n"),
                 QStringList{"t.yaml:2:10: 'extends' is an empty list"});
        QCOMPARE(
            errorsOf("name: a\nextends: [base, base, [x]]\n"),
            (QStringList{"t.yaml:2:17: 'base' is listed twice in 'extends'",
                         "t.yaml:2:23: a parent in 'extends' must be a scalar, found a list"}));
    }

    void matchErrors()
    {
        QCOMPARE(errorsOf("name: a\nmatch:\n  node: n1\n"),
                 QStringList{"t.yaml:3:3: unknown key 'node' in 'match' (expected nodes or "
                             "labels; did you mean nodes?)"});
        QCOMPARE(errorsOf("name: a\nmatch:\n  nodes: []\n"),
                 QStringList{"t.yaml:3:10: 'nodes' is an empty list: the profile would match "
                             "no node"});
        QCOMPARE(errorsOf("name: a\nmatch:\n  nodes: {a: 1}\n"),
                 QStringList{"t.yaml:3:10: 'nodes' must be a hostlist or a list of node "
                             "patterns, found a mapping"});
        // The column points into a hostlist written as one string.
        QCOMPARE(errorsOf("name: a\nmatch:\n  nodes: node[01-04],gpu[5-1]\n"),
                 QStringList{"t.yaml:3:22: bad node pattern 'gpu[5-1]' at column 5: range 5-1 "
                             "is empty (low > high)"});
        QCOMPARE(errorsOf("name: a\nmatch:\n  nodes:\n    - n1\n    - node[01-\n"),
                 QStringList{"t.yaml:5:7: bad node pattern 'node[01-' at column 5: '[' is not "
                             "closed"});
        QCOMPARE(errorsOf("name: a\nmatch:\n  labels: [role]\n"),
                 QStringList{"t.yaml:3:11: 'labels' must be a mapping of label to value, found a "
                             "list"});
        QCOMPARE(errorsOf("name: a\nmatch:\n  labels:\n    role: compute\n    role: io\n"
                          "    rack: [1]\n"),
                 (QStringList{"t.yaml:5:5: duplicate label 'role' (first at line 4)",
                              "t.yaml:6:11: label 'rack' must be a scalar, found a list"}));
    }

    void controlCharactersInMessagesAreEscaped()
    {
        QCOMPARE(errorsOf("name: a\n\"bad\\tkey\": 1\n"),
                 QStringList{"t.yaml:2:1: unknown key 'bad\\x09key' (expected name, description, "
                             "extends, match or params)"});
    }

    void tooLargeIsRefusedUnread()
    {
        const std::string big(kMaxProfileBytes + 1, '#');
        QCOMPARE(texts(parseProfile(big, "big.yaml").errors),
                 QStringList{"big.yaml: profile is larger than 1024 KiB"});
    }

    void diagnosticsBecomeOneStatus()
    {
        const auto errors = parseProfile("name: a\nparams:\n  x:\n  y:\n", "t.yaml").errors;
        const Status status = toStatus(errors);
        QCOMPARE(status.code(), Errc::invalid_argument);
        QCOMPARE(QString::fromStdString(status.message()),
                 "t.yaml:3:3: no value for 'x'\nt.yaml:4:3: no value for 'y'");
        QVERIFY(toStatus(Diagnostics{}).ok());
    }
};

QTEST_GUILESS_MAIN(TestProfileParser)
#include "test_profile_parser.moc"
