#include "app/tunables_view.h"

#include "app/cluster_controller.h"
#include "app/fan_out_operation.h"
#include "app/view_setup.h"
#include "core/param_check.h"
#include "models/schema_model.h"
#include "models/set_result_model.h"
#include "models/value_matrix_model.h"
#include "widgets/param_editor.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace lutra::console {

TunablesView::TunablesView(ClusterController &cluster, TargetsProvider targets, QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_targets(std::move(targets)),
      m_tree(new QTreeView(this)), m_matrixView(new QTableView(this)),
      m_matrix(new ValueMatrixModel(this)), m_editorBox(new QVBoxLayout),
      m_paramTitle(new QLabel(this)), m_paramHelp(new QLabel(this)),
      m_targetsLabel(new QLabel(this)), m_roleNote(new QLabel(this)),
      m_dryRun(new QPushButton(tr("Dry run"), this)), m_apply(new QPushButton(tr("Apply"), this)),
      m_results(new SetResultModel(this)), m_resultsView(new QTableView(this))
{
    m_tree->setObjectName("tunables.schema");
    m_tree->setModel(&m_cluster.schemaModel());
    setupResultTree(m_tree);
    m_matrixView->setObjectName("tunables.matrix");
    m_matrixView->setModel(m_matrix);
    setupResultTable(m_matrixView);
    m_resultsView->setObjectName("tunables.results");
    m_resultsView->setModel(m_results);
    setupResultTable(m_resultsView);
    m_paramTitle->setObjectName("tunables.param");
    m_paramHelp->setObjectName("tunables.help");
    m_paramHelp->setWordWrap(true);
    m_targetsLabel->setObjectName("tunables.targets");
    m_roleNote->setObjectName("tunables.roleNote");
    m_roleNote->setWordWrap(true);
    m_roleNote->setStyleSheet("color: #8a5300");
    m_dryRun->setObjectName("tunables.dryRun");
    m_apply->setObjectName("tunables.apply");
    m_apply->setToolTip(tr("Enabled after a dry run of this value on these nodes succeeded"));

    auto *editPane = new QWidget(this);
    auto *editLayout = new QVBoxLayout(editPane);
    editLayout->addWidget(m_paramTitle);
    editLayout->addWidget(m_paramHelp);
    editLayout->addLayout(m_editorBox);
    editLayout->addWidget(m_targetsLabel);
    editLayout->addWidget(m_roleNote);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_dryRun);
    buttons->addWidget(m_apply);
    buttons->addStretch(1);
    editLayout->addLayout(buttons);
    editLayout->addStretch(1);

    auto *right = new QSplitter(Qt::Vertical);
    right->addWidget(m_matrixView);
    auto *lower = new QSplitter(Qt::Horizontal);
    lower->addWidget(editPane);
    lower->addWidget(m_resultsView);
    lower->setStretchFactor(1, 2);
    right->addWidget(lower);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_tree);
    split->addWidget(right);
    split->setStretchFactor(1, 2);
    split->setSizes({520, 880});
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &TunablesView::onSelection);
    connect(m_dryRun, &QPushButton::clicked, this, &TunablesView::dryRun);
    connect(m_apply, &QPushButton::clicked, this, &TunablesView::apply);
    showEditor(nullptr);
}

QStringList TunablesView::targets() const
{
    auto chosen = m_targets ? m_targets() : QStringList{};
    return chosen.isEmpty() ? m_cluster.addresses() : chosen;
}

bool TunablesView::selectParameter(const QString &fullName)
{
    const auto index = m_cluster.schemaModel().indexOf(fullName);
    if (!index.isValid()) {
        return false;
    }
    m_tree->expand(index.parent());
    m_tree->setCurrentIndex(index);
    return true;
}

void TunablesView::onSelection()
{
    const auto index = m_tree->currentIndex();
    const auto &schema = m_cluster.schemaModel();
    m_matrixNames = schema.leafNamesUnder(index);
    m_matrix->setParameters(m_matrixNames);
    showEditor(schema.spec(index));
    reloadValues();
}

void TunablesView::reloadValues()
{
    const auto names = m_matrixNames;
    if (names.isEmpty()) {
        return;
    }
    for (const auto &address : m_cluster.addresses()) {
        auto *connection = m_cluster.connection(address);
        if (connection->state() != ConnectionState::ready) {
            m_matrix->removeNode(m_cluster.nodeName(address));
            continue;
        }
        connection->getParams(names, {}, [this, address, names](Reply<QList<InstanceValue>> reply) {
            if (!reply.ok || names != m_matrixNames) {
                return;
            }
            m_matrix->setValues(m_cluster.nodeName(address), reply.value);
            if (m_editor != nullptr && !m_editorSeeded) {
                // The live value as the starting point of an edit.
                for (const auto &value : reply.value) {
                    if (value.name == m_param) {
                        m_editor->setValue(value.value);
                        m_editorSeeded = true;
                        updateControls();
                        break;
                    }
                }
            }
        });
    }
}

void TunablesView::showEditor(const ParamSpec *spec)
{
    delete m_editor;
    m_editor = nullptr;
    m_results->clear();
    m_dryRunText.clear();
    if (spec == nullptr) {
        m_param.clear();
        m_paramTitle->setText(tr("<i>Choose a parameter in the tree to edit it; choose a branch "
                                 "to compare its values across nodes.</i>"));
        m_paramHelp->clear();
        updateControls();
        return;
    }
    m_param = spec->name;
    m_paramTitle->setText(QStringLiteral("<b>%1</b>").arg(spec->name));
    m_paramHelp->setText(spec->help + (spec->allowed.isEmpty() ? QString() : "\n" + spec->allowed));
    m_editor = ParamEditor::create(*spec, this);
    m_editor->setObjectName("tunables.editor");
    m_editorBox->addWidget(m_editor);
    m_editorSeeded = false;
    connect(m_editor, &ParamEditor::edited, this, &TunablesView::updateControls);
    updateControls();
}

void TunablesView::updateControls()
{
    const auto chosen = targets();
    const Role role = m_cluster.roleOn(chosen);
    m_targetsLabel->setText(
        tr("Set on: %1").arg(shortNodeList(m_cluster.nodeNames(chosen), 4)) +
        (chosen.size() > 4 ? tr(" (select rows in Cluster to narrow)") : QString()));
    const bool admin = role == Role::admin;
    if (!admin) {
        QString weakest;
        for (const auto &address : chosen) {
            const auto *connection = m_cluster.connection(address);
            if (connection->state() == ConnectionState::ready &&
                connection->info().role != Role::admin) {
                weakest = m_cluster.nodeName(address);
                break;
            }
        }
        m_roleNote->setText(weakest.isEmpty()
                                ? tr("No target node is connected: nothing can be set now.")
                                : tr("Your role on %1 is %2: setting parameters needs admin. "
                                     "You can look, not change.")
                                      .arg(weakest, roleName(role)));
    }
    m_roleNote->setVisible(!admin && !m_param.isEmpty());
    const bool editable = admin && m_editor != nullptr && !m_busy;
    if (m_editor != nullptr) {
        m_editor->setVisible(admin);
    }
    m_dryRun->setVisible(admin);
    m_apply->setVisible(admin);
    const bool valid = editable && m_editor->check().ok;
    m_dryRun->setEnabled(valid);
    m_apply->setEnabled(valid && !m_dryRunText.isEmpty() && m_dryRunText == m_editor->text() &&
                        m_dryRunNodes == chosen);
}

void TunablesView::dryRun()
{
    runSet(true);
}

void TunablesView::apply()
{
    runSet(false);
}

void TunablesView::runSet(bool dry)
{
    if (m_editor == nullptr || m_busy) {
        return;
    }
    const auto chosen = targets();
    const QString text = m_editor->text();
    m_busy = true;
    m_results->clear();
    if (dry) {
        m_dryRunText.clear();
    }
    updateControls();
    auto sink = [this](const QString &address, const Reply<SetOutcome> &reply) {
        const auto name = m_cluster.nodeName(address);
        if (reply.ok) {
            m_results->setOutcome(name, reply.value);
        } else {
            m_results->setNodeError(name, reply.error);
        }
    };
    const QString title = (dry ? tr("dry run: %1=%2") : tr("set %1=%2")).arg(m_param, text);
    const QList<Assignment> assignments{{m_param, text}};
    auto *operation = new FanOutOperation(
        m_cluster, title, chosen, setParamsStep(assignments, {}, dry, sink),
        m_cluster.lutractlScript(chosen, setParamsArguments(assignments, dry)), this);
    connect(operation, &FanOutOperation::finished, this, [this, operation, dry, chosen, text] {
        operation->deleteLater();
        m_busy = false;
        bool ok = true;
        for (const auto &outcome : operation->outcomes()) {
            ok = ok && outcome.state == OpState::ok;
        }
        if (dry && ok) {
            m_dryRunText = text;
            m_dryRunNodes = chosen;
        } else {
            m_dryRunText.clear();
        }
        updateControls();
        if (dry) {
            emit dryRunFinished(ok);
        } else {
            reloadValues();
            emit applyFinished(ok);
        }
    });
    operation->start();
}

void TunablesView::refresh()
{
    updateControls();
}

} // namespace lutra::console
