#pragma once
// lutra-console --tour DIR: an offscreen walk through every view on a live cluster (the demo's),
// saving a screenshot of each step into DIR: what an admin would see, without a display.

#include <QString>

namespace lutra::console {

class ClusterController;
class MainWindow;

// Returns the process exit code: 0 when every step worked and every picture has content.
int runTour(MainWindow &window, ClusterController &cluster, const QString &directory);

} // namespace lutra::console
