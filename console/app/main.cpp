// lutra-console: operate a lutra cluster — live readahead and lock-LRU charts per node and across
// the cluster, tunables edited from the live schema, fan-outs with dry runs and per-node results.

#include "app/cluster_controller.h"
#include "app/cluster_file.h"
#include "app/console_bench.h"
#include "app/main_window.h"
#include "app/tour.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

#include <cstdio>

int main(int argc, char **argv)
{
    using namespace lutra::console;
    // The command line and the cluster file are read before any window system is touched, so
    // --help, usage errors and file errors work on a machine without a display.
    QCoreApplication::setOrganizationName("lutra"); // where QSettings keep the last cluster file
    QCoreApplication::setApplicationName("lutra-console");
    QCoreApplication::setApplicationVersion(LUTRA_CONSOLE_VERSION);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "lutra-console: operate a lutra cluster through each node's lutra-ctld.\n"
        "Open a cluster file (--cluster) or a hostlist (-H node[001-128]:7370).");
    const QCommandLineOption helpOption({"h", "help"}, "show this help");
    const QCommandLineOption versionOption("version", "show the version");
    parser.addOption(helpOption);
    parser.addOption(versionOption);
    const QCommandLineOption clusterOption("cluster",
                                           "the cluster file (YAML: groups of hosts, "
                                           "token_file, tls)",
                                           "FILE");
    const QCommandLineOption hostsOption({"H", "hosts"}, "a hostlist of ctlds for a quick look",
                                         "HOSTLIST");
    const QCommandLineOption tokenOption("token-file", "bearer token for -H", "FILE");
    const QCommandLineOption caOption("tls-ca", "PEM CA bundle: TLS to -H nodes", "FILE");
    const QCommandLineOption certOption("tls-cert", "PEM client certificate (mTLS)", "FILE");
    const QCommandLineOption keyOption("tls-key", "PEM key of --tls-cert", "FILE");
    const QCommandLineOption benchOption(
        "bench",
        "measure the GUI thread's cost per frame with N synthetic nodes at 1 update/s, "
        "for each N of a comma list (e.g. 1,128), and print JSON",
        "NODES");
    const QCommandLineOption streamsOption(
        "bench-streams",
        "measure what N counter streams cost the lutra-ctld at -H/--node "
        "(with --ctld-pid) and print JSON",
        "N");
    const QCommandLineOption ctldPidOption("ctld-pid", "the pid of that lutra-ctld", "PID");
    const QCommandLineOption secondsOption("seconds", "measuring time of --bench-streams", "S",
                                           "10");
    const QCommandLineOption tourOption(
        "tour",
        "walk through every view on the cluster offscreen, save a screenshot of each "
        "into DIR, and exit (0 when every step worked)",
        "DIR");
    const QCommandLineOption benchFramesOption("bench-frames", "frames per node count (default 30)",
                                               "N", "30");
    parser.addOptions({clusterOption, hostsOption, tokenOption, caOption, certOption, keyOption,
                       benchOption, benchFramesOption, tourOption, streamsOption, ctldPidOption,
                       secondsOption});
    QStringList arguments;
    for (int i = 0; i < argc; ++i) {
        arguments << QString::fromLocal8Bit(argv[i]);
    }
    if (!parser.parse(arguments)) {
        std::fprintf(stderr, "lutra-console: %s (see --help)\n", qPrintable(parser.errorText()));
        return 2;
    }
    if (parser.isSet(helpOption)) {
        std::printf("%s",
                    qPrintable(parser.helpText().replace("<executable_name>", "lutra-console")));
        return 0;
    }
    if (parser.isSet(versionOption)) {
        std::printf("lutra-console %s\n", LUTRA_CONSOLE_VERSION);
        return 0;
    }
    const bool headless =
        parser.isSet(benchOption) || parser.isSet(tourOption) || parser.isSet(streamsOption);
    // The bench and the tour need no display: offscreen unless told otherwise.
    if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }

    if (parser.isSet(benchOption)) {
        QApplication app(argc, argv);
        return runConsoleBench(parser.value(benchOption), parser.value(benchFramesOption).toInt());
    }
    if (parser.isSet(streamsOption)) {
        Endpoint node;
        node.address = parser.value(hostsOption);
        node.tokenFile = parser.value(tokenOption);
        node.tlsCa = parser.value(caOption);
        QApplication app(argc, argv);
        return runStreamsBench(node, parser.value(ctldPidOption).toLongLong(),
                               parser.value(streamsOption).toInt(),
                               parser.value(secondsOption).toInt());
    }
    if (parser.isSet(clusterOption) && parser.isSet(hostsOption)) {
        std::fprintf(stderr, "lutra-console: give --cluster or -H, not both\n");
        return 2;
    }
    ClusterFile::Parsed parsed;
    if (parser.isSet(hostsOption)) {
        Endpoint credentials;
        credentials.tokenFile = parser.value(tokenOption);
        credentials.tlsCa = parser.value(caOption);
        credentials.tlsCert = parser.value(certOption);
        credentials.tlsKey = parser.value(keyOption);
        parsed = ClusterFile::fromHostlist(parser.value(hostsOption), credentials);
    } else {
        QString path = parser.value(clusterOption);
        if (path.isEmpty()) {
            path = QSettings().value("cluster/lastFile").toString();
        }
        if (!path.isEmpty()) {
            parsed = ClusterFile::load(path);
        }
    }
    if (!parsed.ok()) {
        for (const auto &error : parsed.errors) {
            std::fprintf(stderr, "lutra-console: %s\n", qPrintable(error));
        }
        return 2;
    }
    if (!headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
        std::fprintf(stderr, "lutra-console: no display (DISPLAY and WAYLAND_DISPLAY are unset): "
                             "run it in a desktop session or under xvfb-run, or use --tour DIR "
                             "for an offscreen walk with screenshots\n");
        return 2;
    }

    QApplication app(argc, argv);
    ClusterController cluster;
    MainWindow window(cluster);
    window.show();
    if (!parsed.file.nodes.isEmpty()) {
        window.openCluster(parsed.file);
    }
    if (parser.isSet(tourOption)) {
        if (parsed.file.nodes.isEmpty()) {
            std::fprintf(stderr, "lutra-console: --tour needs --cluster or -H\n");
            return 2;
        }
        const int status = runTour(window, cluster, parser.value(tourOption));
        cluster.shutdown();
        return status;
    }
    return app.exec();
}
