// lutra-ctld: the node control daemon. See ctld/README.md.

#include "core/log.h"
#include "daemon/config.h"
#include "daemon/daemon.h"

#include <signal.h>
#include <systemd/sd-daemon.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

namespace {

using namespace lutra;
using namespace lutra::ctld;

constexpr std::string_view kLog = "ctld";

// Signals are taken by this thread only (sigtimedwait): SIGHUP reloads tokens and roles,
// SIGTERM/SIGINT stop; in between, the daemon's periodic work every sample_interval.
int run(Config config)
{
    sigset_t signals;
    sigemptyset(&signals);
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
        sigaddset(&signals, signal);
    }
    pthread_sigmask(SIG_BLOCK, &signals, nullptr); // every thread started below inherits it
    ::signal(SIGPIPE, SIG_IGN);

    FaultHooks faults;
#ifdef LUTRA_CTLD_FAULT_HOOKS
    // Only in lutra-ctld-faults, the test build: crash points for the recovery tests and soak.
    if (const char *text = std::getenv("LUTRA_FAULT_KILL_AFTER_INSTANCES")) {
        faults.killAfterInstances = static_cast<std::size_t>(std::strtoull(text, nullptr, 10));
    }
#endif
    const bool insecure = !checkListenSecurity(config).ok();
    auto daemon = Daemon::start(std::move(config), faults);
    if (!daemon) {
        std::cerr << "lutra-ctld: " << daemon.status().message() << "\n";
        return insecure ? 2 : 1;
    }
    // One line scripts and tests wait for: everything is listening.
    std::cout << "lutra-ctld: " << (*daemon)->readyLine() << std::endl;
    sd_notify(0, "READY=1");

    const auto interval =
        std::chrono::duration_cast<std::chrono::seconds>((*daemon)->config().sampleInterval);
    for (;;) {
        timespec timeout{};
        timeout.tv_sec = std::max<std::int64_t>(1, interval.count());
        const int signal = sigtimedwait(&signals, nullptr, &timeout);
        if (signal == SIGHUP) {
            if (auto reloaded = (*daemon)->reloadAuth(); !reloaded) {
                log::error(kLog, "SIGHUP: config not reloaded: " + reloaded.message());
            }
            continue;
        }
        if (signal == SIGTERM || signal == SIGINT) {
            break;
        }
        (*daemon)->tick();
    }

    sd_notify(0, "STOPPING=1");
    log::info(kLog, "stopping: finishing calls in flight");
    if (auto stopped = (*daemon)->stop(); !stopped) {
        std::cerr << "lutra-ctld: " << stopped.message() << "\n";
        return 1;
    }
    log::info(kLog, "stopped");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"lutra-ctld: the node control daemon of lutra. Finds the node's datapath "
                 "processes in the run dir, keeps their tunables in the desired state, records "
                 "every change, and serves lutra.ctl.v1 (gRPC) and /metrics.",
                 "lutra-ctld"};
    std::string configPath = "/etc/lutra/ctld.yaml";
    bool checkOnly = false;
    app.add_option("-c,--config", configPath, "ctld.yaml to read")->capture_default_str();
    app.add_flag("--check-config", checkOnly,
                 "check the config (syntax, files, listen security), print a summary and exit");
    CLI11_PARSE(app, argc, argv);

    auto config = lutra::ctld::loadConfig(configPath);
    if (!config) {
        std::cerr << "lutra-ctld: " << config.status().message() << "\n";
        return 1;
    }
    if (checkOnly) {
        if (auto secure = lutra::ctld::checkListenSecurity(*config); !secure) {
            std::cerr << "lutra-ctld: " << secure.message() << "\n";
            return 2;
        }
        std::cout << configPath << ": ok (node " << config->node << ", " << config->listen.size()
                  << " listen address(es), "
                  << (config->tls.enabled() ? "TLS" : "no TLS, loopback only") << ", "
                  << config->tokens.size() << " token(s), db " << config->db.native()
                  << ", run dir " << config->runDir.native() << ")\n";
        return 0;
    }
    return run(std::move(*config));
}
