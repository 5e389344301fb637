// lctl-style globbing over dotted parameter names.
#include "core/params/glob.h"

#include <QTest>

using namespace lutra;
using namespace lutra::params;

class TestParamGlob : public QObject {
    Q_OBJECT
private slots:
    void matching_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("matches");
        QTest::newRow("literal") << "osc.ost0.max_pages_per_rpc"
                                 << "osc.ost0.max_pages_per_rpc" << true;
        QTest::newRow("literal other") << "osc.ost0.max_pages_per_rpc"
                                       << "osc.ost1.max_pages_per_rpc" << false;
        QTest::newRow("star instance") << "osc.*.max_pages_per_rpc"
                                       << "osc.ost7.max_pages_per_rpc" << true;
        QTest::newRow("star never crosses a dot") << "osc.*"
                                                  << "osc.ost0.max_pages_per_rpc" << false;
        QTest::newRow("star leaf") << "osc.ost0.max_*"
                                   << "osc.ost0.max_dirty_mb" << true;
        QTest::newRow("star empty") << "osc.ost0.max_dirty_mb*"
                                    << "osc.ost0.max_dirty_mb" << true;
        QTest::newRow("two stars") << "*.*.checksums"
                                   << "osc.ost0.checksums" << true;
        QTest::newRow("star backtracks") << "osc.ost0.*_mb"
                                         << "osc.ost0.max_dirty_mb" << true;
        QTest::newRow("star in middle") << "llite.*.max_read_ahead_*_mb"
                                        << "llite.lutra.max_read_ahead_per_file_mb" << true;
        QTest::newRow("star too few parts") << "ldlm.*.lru_size"
                                            << "ldlm.namespaces.ost0.lru_size" << false;
        QTest::newRow("star per part") << "ldlm.namespaces.*.lru_size"
                                       << "ldlm.namespaces.ost0.lru_size" << true;
        QTest::newRow("question") << "osc.ost?.checksums"
                                  << "osc.ost3.checksums" << true;
        QTest::newRow("question needs a char") << "osc.ost?.checksums"
                                               << "osc.ost.checksums" << false;
        QTest::newRow("question not a dot") << "osc?ost0.checksums"
                                            << "osc.ost0.checksums" << false;
        QTest::newRow("bracket range") << "osc.ost[0-3].checksums"
                                       << "osc.ost2.checksums" << true;
        QTest::newRow("bracket range miss") << "osc.ost[0-3].checksums"
                                            << "osc.ost4.checksums" << false;
        QTest::newRow("bracket set") << "osc.ost[13].checksums"
                                     << "osc.ost3.checksums" << true;
        QTest::newRow("bracket negated !") << "osc.ost[!0].checksums"
                                           << "osc.ost0.checksums" << false;
        QTest::newRow("bracket negated ^") << "osc.ost[^0].checksums"
                                           << "osc.ost1.checksums" << true;
        QTest::newRow("bracket literal ]") << "a.[]x]"
                                           << "a.]" << true;
        QTest::newRow("bracket dash last") << "a.[x-]"
                                           << "a.-" << true;
        QTest::newRow("braces") << "osc.{ost0,ost2}.checksums"
                                << "osc.ost2.checksums" << true;
        QTest::newRow("braces miss") << "osc.{ost0,ost2}.checksums"
                                     << "osc.ost1.checksums" << false;
        QTest::newRow("braces across dots") << "{osc.ost0,llite.lutra}.fast_read"
                                            << "llite.lutra.fast_read" << true;
        QTest::newRow("braces nested") << "osc.ost{0,{1,2}}.x"
                                       << "osc.ost2.x" << true;
        QTest::newRow("braces with star") << "osc.*.{max_dirty_mb,checksums}"
                                          << "osc.ost9.checksums" << true;
        QTest::newRow("braces empty alternative") << "osc.ost0.checksums{,x}"
                                                  << "osc.ost0.checksums" << true;
        QTest::newRow("escaped star literal") << "a.b\\*"
                                              << "a.b*" << true;
        QTest::newRow("escaped star not wild") << "a.b\\*"
                                               << "a.bc" << false;
        QTest::newRow("case sensitive") << "OSC.ost0.checksums"
                                        << "osc.ost0.checksums" << false;
        QTest::newRow("single component") << "jobid_var"
                                          << "jobid_var" << true;
        QTest::newRow("single star") << "*"
                                     << "jobid_var" << true;
        QTest::newRow("single star vs dotted") << "*"
                                               << "osc.ost0.checksums" << false;
    }

    void matching()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, name);
        QFETCH(bool, matches);
        auto glob = Glob::compile(pattern.toStdString());
        QVERIFY2(glob.ok(), glob.status().toString().c_str());
        QCOMPARE(glob->matches(name.toStdString()), matches);
    }

    void leadingComponents()
    {
        auto glob = Glob::compile("osc.ost0");
        QVERIFY(glob.ok());
        QVERIFY(glob->matchesLeadingComponents("osc.ost0.max_pages_per_rpc"));
        QVERIFY(glob->matchesLeadingComponents("osc.ost0"));
        QVERIFY(!glob->matchesLeadingComponents("osc.ost00.checksums"));
        QVERIFY(!glob->matchesLeadingComponents("osc"));
        auto star = Glob::compile("ldlm.*");
        QVERIFY(star.ok());
        QVERIFY(star->matchesLeadingComponents("ldlm.namespaces.ost0.lru_size"));
        QVERIFY(!star->matches("ldlm.namespaces.ost0.lru_size"));
    }

    void wildcardsDetected()
    {
        QVERIFY(!Glob::compile("osc.ost0.checksums")->hasWildcards());
        QVERIFY(Glob::compile("osc.*.checksums")->hasWildcards());
        QVERIFY(Glob::compile("osc.{a,b}.checksums")->hasWildcards());
    }

    void rejectsBadPatterns_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("reason");
        QTest::newRow("empty") << ""
                               << "empty pattern";
        QTest::newRow("unclosed brace") << "osc.{ost0,ost1.x"
                                        << "column 5: '{' is never closed";
        QTest::newRow("stray close brace") << "osc.ost0}.x"
                                           << "column 9: '}' without a matching '{'";
        QTest::newRow("unclosed bracket") << "osc.ost[0-3.x"
                                          << "column 8: '[' is never closed";
        QTest::newRow("trailing backslash") << "osc.ost0\\"
                                            << "column 9: a trailing '\\' escapes nothing";
        QTest::newRow("double dot") << "osc..x"
                                    << "empty component";
        QTest::newRow("leading dot") << ".osc.x"
                                     << "empty component";
        QTest::newRow("trailing dot") << "osc.x."
                                      << "empty component";
        QTest::newRow("brace makes empty part") << "osc.{,a}.x"
                                                << "empty component";
        QTest::newRow("too long") << QString(1025, 'a') << "longer than 1024";
        QTest::newRow("brace explosion")
            << "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"
            << "more than 1024";
    }

    void rejectsBadPatterns()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, reason);
        auto glob = Glob::compile(pattern.toStdString());
        QVERIFY(!glob.ok());
        QCOMPARE(glob.status().code(), Errc::invalid_argument);
        const QString message = QString::fromStdString(glob.status().message());
        QVERIFY2(message.contains(reason), qPrintable(message));
    }

    void componentMatcherIsLinearOnStars()
    {
        // A classic exponential case for naive backtracking: must finish instantly.
        const std::string text(4000, 'a');
        const std::string pattern = std::string(50, '*') + "b";
        QVERIFY(!matchComponent(pattern, text));
        QVERIFY(matchComponent("*a*a*a*", text));
    }
};

QTEST_GUILESS_MAIN(TestParamGlob)
#include "test_param_glob.moc"
