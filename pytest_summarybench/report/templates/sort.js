document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.setAttribute("tabindex", "0");
    th.setAttribute("aria-sort", "none");
    function sort() {
      var body = table.tBodies[0];
      var asc = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (h) { h.setAttribute("aria-sort", "none"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[col];
        var v = cell ? (cell.getAttribute("data-v") || cell.textContent.trim()) : "";
        var n = parseFloat(v);
        return isNaN(n) || !/^[-+]?[0-9.]/.test(v) ? v.toLowerCase() : n;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (typeof x !== typeof y) { x = String(x); y = String(y); }
        return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
  });
});
