#include "app/view_setup.h"

#include <QHeaderView>
#include <QTableView>
#include <QTreeView>

namespace lutra::console {

void setupResultTable(QTableView *view)
{
    view->verticalHeader()->hide();
    view->setWordWrap(false);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->horizontalHeader()->setStretchLastSection(true);
}

void setupResultTree(QTreeView *view)
{
    view->setUniformRowHeights(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->header()->setStretchLastSection(true);
}

} // namespace lutra::console
