// hiera-lookup serve: the one script. Pages work without it (filters are GET forms); with it,
// a filter box narrows its table as one types. No inline script: the Content-Security-Policy
// allows only this file.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  document.documentElement.dataset.script = "on";
  for (const input of document.querySelectorAll("input[data-filter]")) {
    const table = document.getElementById(input.dataset.filter);
    if (!table) continue;
    const rows = Array.from(table.querySelectorAll("tbody tr"));
    const apply = () => {
      const q = input.value.trim().toLowerCase();
      for (const row of rows) {
        row.hidden = q !== "" && !row.textContent.toLowerCase().includes(q);
      }
    };
    input.addEventListener("input", apply);
    apply();
  }
});
