// Render the math that pymdownx.arithmatex (generic mode) leaves in the page, with the KaTeX copy
// served from this site (docs/assets/katex, from the npm package katex 0.16.22): no CDN, so the
// built site renders formulas offline. `document$` is mkdocs-material's page-load observable
// (instant navigation included); plain page loads fall back to DOMContentLoaded.
(function () {
  function render(root) {
    renderMathInElement(root, {
      delimiters: [
        { left: "\\[", right: "\\]", display: true },
        { left: "\\(", right: "\\)", display: false },
      ],
      throwOnError: false,
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(function ({ body }) { render(body); });
  } else {
    document.addEventListener("DOMContentLoaded", function () { render(document.body); });
  }
})();
