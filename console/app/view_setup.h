#pragma once
// How the console's tables and trees look: one row per line (no wrapped ids), rows selected whole,
// columns sized to what they hold. Only for views whose models change on actions, not every frame
// (sizing to contents measures every cell).

class QTableView;
class QTreeView;

namespace lutra::console {

void setupResultTable(QTableView *view);
void setupResultTree(QTreeView *view);

} // namespace lutra::console
