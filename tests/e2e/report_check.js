// report_check.js - appended by tests/e2e/report.sh to a copy of kiln report's
// HTML page (the page itself carries no script): what Chromium laid out, written
// into the DOM for --dump-dom. One line per finding: the page's overflow, each
// table's against its box, and per chart its legend entries, its axes' tick
// labels and titles, and any text drawn outside the SVG's viewBox (clipped).
(function () {
	var out = [], de = document.documentElement;
	out.push("width " + window.innerWidth + " scroll " + de.scrollWidth);
	document.querySelectorAll("table").forEach(function (t) {
		var box = t.parentElement.clientWidth;
		out.push("table " + t.id + " " + t.scrollWidth + " in " + box);
	});
	document.querySelectorAll("svg").forEach(function (s) {
		var vb = s.viewBox.baseVal, clipped = 0;
		s.querySelectorAll("text").forEach(function (t) {
			var b = t.getBBox();
			if (t.closest(".axis-y") && t.classList.contains("axis-title")) return;
			if (b.x < -0.5 || b.x + b.width > vb.width + 0.5 || b.y < -0.5 ||
			    b.y + b.height > vb.height + 0.5)
				clipped++;
		});
		out.push("svg " + s.id +
			" legend " + s.querySelectorAll(".legend .legend-entry").length +
			" xticks " + s.querySelectorAll(".axis-x .tick text").length +
			" yticks " + s.querySelectorAll(".axis-y .tick text").length +
			" titles " + s.querySelectorAll(".axis-title").length +
			" clipped " + clipped +
			" right " + Math.round(s.getBoundingClientRect().right));
	});
	var pre = document.createElement("pre");
	pre.id = "kiln-check";
	pre.textContent = out.join("\n");
	document.body.appendChild(pre);
})();
