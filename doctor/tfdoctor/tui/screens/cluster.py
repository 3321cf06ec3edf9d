"""The cluster screen: verdict on top, the per-node table (straggler marked), the all-reduce
sizes, the cluster findings, and the highlighted finding's detail."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, OptionList, Static
from textual.widgets.option_list import Option

from tfdoctor.cluster import view
from tfdoctor.tui.keys import LIST_KEYS
from tfdoctor.tui.widgets.filter import ListFilter, matches

if TYPE_CHECKING:
    from tfdoctor.tui.cluster import ClusterApp

SEVERITY_STYLE = {"error": "bold $text-error", "warning": "$text-warning", "info": "$text-primary"}


def _app(node: Any) -> ClusterApp:
    return cast("ClusterApp", node.app)


def _columns(table: DataTable[Content], labels: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """Columns as wide as their widest cell (styled cells are not measured by the table)."""
    for i, label in enumerate(labels):
        table.add_column(label, width=max([len(label), *(len(r[i]) for r in rows)]))


class ClusterVerdict(Static):
    """The verdict bar of the cluster: status and root cause, what ran, the target."""

    def on_mount(self) -> None:
        for name in ("document", "running", "error"):
            self.watch(self.app, name, self.show, init=False)
        self.show()

    def show(self, _value: object = None) -> None:
        app = _app(self)
        doc = app.document
        style = "-failed" if app.error else "-running" if doc is None else f"-{doc['verdict']['status']}"
        self.remove_class("-running", "-healthy", "-problems", "-incomplete", "-failed")
        self.add_class(style)
        if app.error is not None:
            text = f"The cluster run failed: {app.error}\n "
        elif doc is None:
            text = f"Running ... {app.doing}\nEach node is diagnosed, then the job runs."
        else:
            text = f"{view.headline(doc)}\n{view.summary(doc)}\n{view.target(doc)}"
        self.update(Content(text))


class NodeTable(DataTable[Content]):
    """A table the cluster screen lists rows in: j/k move, Enter opens the row."""

    BINDINGS = LIST_KEYS


class FindingList(OptionList):
    """The cluster findings: j/k move, Enter shows the highlighted one's detail."""

    BINDINGS = LIST_KEYS


class ClusterScreen(Screen[None]):
    """What `tfdoctor cluster` shows on a terminal."""

    BINDINGS = [Binding("enter", "open", "Open", show=False),
                Binding("slash", "filter", "Filter")]
    needle = ""
    """The filter's text (/): the worker rows and findings shown contain it."""

    def compose(self) -> ComposeResult:
        yield ClusterVerdict(id="verdict")
        yield ListFilter(placeholder="filter workers and findings; Escape clears", id="filter")
        with VerticalScroll(id="cluster-body"):
            nodes = NodeTable(id="cluster-nodes", cursor_type="row", zebra_stripes=True)
            nodes.border_title = "Nodes"
            yield nodes
            sizes = NodeTable(id="cluster-sizes", cursor_type="none")
            sizes.border_title = "All-reduce"
            yield sizes
            findings = FindingList(id="cluster-findings")
            findings.border_title = "Cluster findings"
            yield findings
            yield Static(id="cluster-detail")
            yield Static(id="cluster-pictures")
        yield Footer()

    def on_mount(self) -> None:
        self.watch(self.app, "document", self.show, init=False)
        self.show()

    def show(self, _value: object = None) -> None:
        doc = _app(self).document
        if doc is None:
            return
        self._show_nodes(doc)
        self._show_sizes(doc)
        self._show_pictures(doc)
        self._show_findings(doc)

    def _show_nodes(self, doc: dict[str, Any]) -> None:
        table = cast("DataTable[Content]", self.query_one("#cluster-nodes", DataTable))
        table.clear(columns=True)
        rows = view.node_rows(doc)
        _columns(table, view.NODE_COLUMNS, [r.cells for r in rows])
        for i, row in enumerate(rows):
            if not matches(self.needle, *row.cells):
                continue
            style = "bold $text-warning" if row.straggler else "bold $text-error" if row.bad else ""
            table.add_row(*(Content.styled(c, style) if style else Content(c) for c in row.cells),
                          key=str(i))
        slow = view.stragglers(doc)
        table.border_title = f"Nodes: {len(doc['workers'])}" + (
            f", straggler: {', '.join(sorted(slow))}" if slow else "") + (
            f" ({table.row_count} match {self.needle!r})" if self.needle else "")

    def _show_sizes(self, doc: dict[str, Any]) -> None:
        table = cast("DataTable[Content]", self.query_one("#cluster-sizes", DataTable))
        table.clear(columns=True)
        whose, rows = view.size_rows(doc)
        _columns(table, view.SIZE_COLUMNS, [cells for cells, _ in rows])
        for cells, wrong in rows:
            table.add_row(*(Content.styled(c, "bold $text-error") if wrong else Content(c) for c in cells))
        table.border_title = f"All-reduce (SUM): {whose}"

    def _show_pictures(self, doc: dict[str, Any]) -> None:
        """Busbw by message size and each worker's compute time as bars (the straggler's line
        stands out), then the node topologies: tfdoctor.pictures, as in the text report."""
        from tfdoctor.pictures import cluster_pictures
        from tfdoctor.pictures.text import render_cluster_pictures

        lines = render_cluster_pictures(cluster_pictures(doc))
        styled = [Content.styled(line, "bold $text-warning") if "<< " in line else Content(line)
                  for line in lines]
        self.query_one("#cluster-pictures", Static).update(Content("\n").join(styled).rstrip())

    def _show_findings(self, doc: dict[str, Any]) -> None:
        findings = self.query_one("#cluster-findings", OptionList)
        findings.clear_options()
        root, at = doc["verdict"].get("root_cause"), view.root_index(doc)
        for i, f in enumerate(doc["findings"]):
            if not matches(self.needle, f["id"], f["message"], *map(str, f["evidence"].values())):
                continue
            title = Content.styled(view.finding_title(f, root if i == at else None),
                                   SEVERITY_STYLE.get(f["severity"], ""))
            findings.add_option(Option(Content.assemble(title, "\n", Content(f["message"])), id=str(i)))
        counts = doc["verdict"]["counts"]
        findings.border_title = (f"Cluster findings: {counts['error']} error, {counts['warning']} "
                                 f"warning, {counts['info']} info")
        if self.needle:
            findings.border_title += f" (filter {self.needle!r})"
        first = findings.get_option_at_index(0).id if findings.option_count else None
        if first is not None:
            findings.highlighted = 0
        self._show_detail(doc, int(first) if first is not None else None)

    def action_filter(self) -> None:
        self.query_one(ListFilter).open()

    def on_list_filter_narrowed(self, event: ListFilter.Narrowed) -> None:
        self.needle = event.needle
        self.show()

    def _show_detail(self, doc: dict[str, Any], index: int | None) -> None:
        detail = self.query_one("#cluster-detail", Static)
        if index is None or not 0 <= index < len(doc["findings"]):
            detail.update("No cluster findings." if not doc["findings"] else "")
            return
        f = doc["findings"][index]
        detail.update(Content.assemble((f["id"], "bold"), "\n", view.finding_detail(f)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a worker's row: its details in the detail pane, scrolled into view."""
        doc = _app(self).document
        if doc is None or event.data_table.id != "cluster-nodes":
            return
        workers, index = doc["workers"], int(event.row_key.value or -1)
        if 0 <= index < len(workers):
            w = workers[index]
            detail = self.query_one("#cluster-detail", Static)
            detail.update(Content.assemble((str(w.get("task", "?")), "bold"), "\n",
                                           view.worker_detail(w)))
            detail.scroll_visible()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a finding: its detail (shown already on highlight), scrolled into view."""
        doc = _app(self).document
        if doc is not None and event.option.id is not None:
            self._show_detail(doc, int(event.option.id))
            self.query_one("#cluster-detail", Static).scroll_visible()

    def action_open(self) -> None:
        """Enter where no list has the focus: open the highlighted finding."""
        findings = self.query_one("#cluster-findings", OptionList)
        doc = _app(self).document
        if doc is not None and findings.highlighted is not None:
            option = findings.get_option_at_index(findings.highlighted).id
            self._show_detail(doc, int(option) if option is not None else None)
            self.query_one("#cluster-detail", Static).scroll_visible()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        doc = _app(self).document
        if doc is not None and event.option.id is not None:
            self._show_detail(doc, int(event.option.id))
