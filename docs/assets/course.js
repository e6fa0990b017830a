// SPDX-License-Identifier: MIT
// The course site's own script (mkdocs.yml, extra_javascript): renders the formulas that
// pymdownx.arithmatex marked (<span class="arithmatex">\(...\)</span>, <div ...>\[...\]</div>)
// with KaTeX, served by the site itself (assets/katex/, copied from Debian's libjs-katex).
(function () {
  function render() {
    if (typeof katex === "undefined") return;
    document.querySelectorAll(".arithmatex").forEach(function (element) {
      if (element.querySelector(".katex")) return;
      var tex = element.textContent.trim();
      var display = element.tagName === "DIV";
      tex = tex.replace(/^\\[\(\[]/, "").replace(/\\[\)\]]$/, "");
      katex.render(tex, element, { displayMode: display, throwOnError: false });
    });
  }
  if (typeof document$ !== "undefined") {
    document$.subscribe(render); // Material's page-change stream (instant loading)
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", render);
  } else {
    render();
  }
})();
