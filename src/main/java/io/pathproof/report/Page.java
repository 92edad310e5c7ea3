package io.pathproof.report;

import io.pathproof.proofdir.Proof;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * report.html: one self-contained page. uPlot's script and style are inlined from the WebJar on the class path; the
 * Content-Security-Policy forbids every fetch, so a page that tried one would record a violation. Every string from
 * evidence goes through {@link Esc}; chart data travel as escaped JSON in a non-executed script element.
 */
final class Page {
    private Page() {}

    static final String UPLOT = "META-INF/resources/webjars/uplot/1.6.30/dist/";

    static String html(Report.Source s) {
        StringBuilder b = new StringBuilder(256 * 1024);
        String title =
                s.proof() != null ? "pathproof proof — " + Sections.t(s.proof().scenario()) : "pathproof report";
        head(b, title);
        header(b, s, title);
        // The proof first (verdict above, then the reveal, the timeline and the step charts), then the evidence behind
        // it; the recorded GPU samples, which are not this proof, last and collapsed.
        Sections.reveal(b, s);
        Sections.timeline(b, s);
        Sections.steps(b, s);
        Sections.diagnosis(b, s);
        Sections.acceptance(b, s.acceptance(), "Acceptance: sealed prediction against the baseline run", "acceptance");
        Sections.callgraph(b, s);
        Sections.answers(b, s);
        Sections.warnings(b, s);
        Sections.phases(b, s);
        Sections.recorded(b, s);
        footer(b, s);
        return b.toString();
    }

    /** The document's head: the content policy, the error trap, uPlot's style and the page's own. */
    private static void head(StringBuilder b, String title) {
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
                .append(
                        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; ")
                .append("style-src 'unsafe-inline'; img-src data:\">\n")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>")
                .append(Esc.html(title))
                .append("</title>\n")
                // Errors and policy violations are written into the page itself, so a headless browser's DOM dump shows
                // them.
                .append(
                        "<script>window.__errors=[];function __err(m){window.__errors.push(String(m));var e=document.getElementById('page-errors');")
                .append(
                        "if(e){e.textContent=window.__errors.join('\\n');e.setAttribute('data-count',String(window.__errors.length));}}")
                .append("window.addEventListener('error',function(ev){__err('error: '+ev.message);});")
                .append("window.addEventListener('unhandledrejection',function(ev){__err('rejection: '+ev.reason);});")
                .append(
                        "document.addEventListener('securitypolicyviolation',function(ev){__err('blocked: '+ev.blockedURI+' ('+ev.violatedDirective+')');});</script>\n")
                .append("<style>")
                .append(resource(UPLOT + "uPlot.min.css"))
                .append("</style>\n<style>")
                .append(CSS)
                .append("</style>\n</head>\n<body>\n");
    }

    /** The verdict, its reasons, what the run was and which backend branch ran. */
    private static void header(StringBuilder b, Report.Source s, String title) {
        b.append("<header><h1>").append(Esc.html(title)).append("</h1>");
        b.append("<p class=\"verdict ")
                .append(Report.good(s) ? "good" : Report.verdict(s).equals("INCONCLUSIVE") ? "undecided" : "bad")
                .append("\" id=\"verdict\">")
                .append(Esc.html(Report.verdict(s)))
                .append("</p>");
        for (String r : Report.reasons(s)) {
            b.append("<p class=\"reason\">").append(Esc.html(r)).append("</p>");
        }
        if (s.emulated()) {
            b.append("<p class=\"emulated\">")
                    .append(Esc.html(s.emulationNote()))
                    .append("</p>");
        }
        b.append("<p class=\"meta\">").append(Esc.html(meta(s))).append("</p>");
        Proof.BackendChoice choice = s.proof() == null ? null : s.proof().backendChoice();
        if (choice != null) {
            // prove's first decision: which backend branch ran, and why (auto's rule from the GPUs and library it
            // found).
            b.append("<p class=\"meta\" id=\"backend-choice\">backend ")
                    .append(Esc.html(Sections.t(choice.requested())))
                    .append(" → <b>")
                    .append(Esc.html(Sections.t(choice.branch())))
                    .append("</b>: ")
                    .append(Esc.html(Sections.t(choice.reason())))
                    .append("</p>");
        }
        b.append("</header>\n");
    }

    /** The error list the audit reads, the chart data and the scripts that draw and audit the page. */
    private static void footer(StringBuilder b, Report.Source s) {
        b.append("<footer><pre id=\"page-errors\" data-count=\"0\"></pre>")
                .append(
                        "<p>uPlot 1.6.30 (MIT) is inlined from its WebJar; this page makes no network request.</p></footer>\n");
        b.append("<script type=\"application/json\" id=\"chart-data\">")
                .append(Esc.scriptJson(Charts.stepData(s)))
                .append("</script>\n");
        b.append("<script>").append(resource(UPLOT + "uPlot.iife.min.js")).append("</script>\n");
        b.append("<script>")
                .append(DRAW)
                .append("</script>\n<script>")
                .append(AUDIT)
                .append("</script>\n</body></html>\n");
    }

    private static String meta(Report.Source s) {
        StringBuilder m = new StringBuilder();
        Proof p = s.proof();
        if (p != null) {
            m.append("backend ")
                    .append(Sections.t(p.backend()))
                    .append(", ")
                    .append(p.worldSize())
                    .append(" rank(s); made ")
                    .append(Sections.t(p.createdAt()))
                    .append(" by ")
                    .append(Sections.t(p.tool()));
        } else {
            m.append("inputs: ").append(String.join(", ", s.inputs()));
        }
        return m.toString();
    }

    static String resource(String name) {
        try (InputStream in = Page.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(
                        "report: " + name + " is missing from the class path (the uPlot WebJar)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("</script", "<\\/script");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static final String CSS = String.join(
            "\n",
            List.of(
                    "body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1200px;padding:1rem 2rem;color:#1b1f24;background:#fff}",
                    "h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}",
                    ".verdict{font-size:1.6rem;font-weight:700;padding:.4rem .8rem;border-radius:6px;display:inline-block;margin:.4rem 0}",
                    ".good{background:#dafbe1;color:#116329}.bad{background:#ffebe9;color:#a40e26}.undecided{background:#fff8c5;color:#7d4e00}",
                    ".emulated{background:#fff8c5;border:1px solid #d4a72c;padding:.3rem .6rem;border-radius:4px}",
                    ".reason{color:#a40e26;margin:.1rem 0}.meta{color:#57606a;font-size:.85rem}",
                    "table{border-collapse:collapse;width:100%;font-size:.82rem;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:left;vertical-align:top}",
                    "th{background:#f6f8fa}td.v-PASS{background:#dafbe1;font-weight:600}td.v-FAIL{background:#ffebe9;font-weight:600}",
                    "td.v-UNPROVEN{background:#fff8c5}td.v-NA{color:#57606a}code,.prov{font-family:ui-monospace,monospace;font-size:.78rem}",
                    "td.prov{max-width:24rem;overflow-wrap:anywhere}td:first-child code{white-space:nowrap}td{overflow-wrap:anywhere}",
                    // A number is read whole: a cell of digits never breaks between them (the call graph's # column
                    // did, digit by digit).
                    "td.num{white-space:nowrap;overflow-wrap:normal;text-align:right;font-variant-numeric:tabular-nums}",
                    "details.recorded{margin:.4rem 0}details.recorded>summary{cursor:pointer}",
                    ".reveal{display:grid;grid-template-columns:1fr 1fr;gap:1rem}.card{border:1px solid #d0d7de;border-radius:6px;padding:.6rem 1rem}",
                    ".card h3{margin:.2rem 0 .5rem 0;font-size:1rem}.match{font-weight:700}.chart{margin:.5rem 0}",
                    "svg text{font-family:ui-monospace,monospace;font-size:11px}.small{font-size:.8rem;color:#57606a}",
                    "#page-errors:empty{display:none}#page-errors{color:#a40e26}footer{margin-top:2rem;font-size:.8rem;color:#57606a}"));

    /** Draws the step-time charts from the JSON data, then writes how many canvas pixels were painted into the DOM. */
    private static final String DRAW = String.join(
            "\n",
            List.of(
                    "(function(){",
                    "var data=JSON.parse(document.getElementById('chart-data').textContent);",
                    "var colors={baseline:'#0969da',variant:'#cf222e',fixed:'#1a7f37',baselineAgain:'#54aeff'};",
                    "var dash={};",
                    "var drawn=0;",
                    "function chart(id,title,xlabel,key){",
                    "  var el=document.getElementById(id); if(!el) return;",
                    "  var labels=Object.keys(data.runs); if(labels.length===0) return;",
                    "  var n=0; labels.forEach(function(l){n=Math.max(n,data.runs[l][key].length);});",
                    "  var xs=[]; for(var i=0;i<n;i++){xs.push(key==='quantile'?(n===1?0.5:i/(n-1)):i);}",
                    "  var series=[{label:xlabel}]; var cols=[xs];",
                    "  labels.forEach(function(l){var ys=data.runs[l][key].slice(); if(key==='quantile'){var m=ys.length;var q=[];",
                    "    for(var i=0;i<n;i++){q.push(m===0?null:ys[Math.min(m-1,Math.round(i*(m-1)/Math.max(1,n-1)))]);} ys=q;}",
                    "    while(ys.length<n){ys.push(null);} cols.push(ys);",
                    // The legend names each run with its median (the table's, computed once): a legend that only
                    // follows the cursor
                    // shows '--' until one hovers, which a printed page or a screenshot never does.
                    "    var r=data.runs[l]; var role=r.role||l; var k=(dash[role]=(dash[role]||0)+1);",
                    "    series.push({label:(r.label||l)+': median '+(r.median==null?'n/a':r.median.toFixed(3)+' ms')+' ('+r.perIteration.length+' steps)',",
                    "      stroke:colors[role]||'#6e7781',dash:k>1?[6,4]:undefined,width:2,points:{show:true,size:4}});});",
                    "  new uPlot({title:title,width:Math.min(1100,el.clientWidth||1100),height:280,series:series,legend:{live:false},",
                    "    axes:[{label:xlabel},{label:'ms'}],scales:{x:{time:false}}},cols,el);",
                    "  drawn++;",
                    "}",
                    "chart('chart-steps','Step time per measured iteration (slowest rank)','iteration','perIteration');",
                    "chart('chart-quantiles','Step-time distribution (per iteration, sorted)','quantile','quantile');",
                    "document.body.setAttribute('data-charts-drawn',String(drawn));",
                    "})();"));

    /**
     * Counts painted canvas pixels and SVG shapes into the DOM. A separate script element: uPlot paints in a microtask,
     * and the microtask queue is drained when the previous script element ends.
     */
    private static final String AUDIT = String.join(
            "\n",
            List.of(
                    "(function(){",
                    "var painted=0;",
                    "document.querySelectorAll('canvas').forEach(function(c){try{var d=c.getContext('2d').getImageData(0,0,c.width,c.height).data;",
                    "  for(var i=3;i<d.length;i+=4){if(d[i]!==0){painted++;}}}catch(e){__err('canvas: '+e);}});",
                    "document.body.setAttribute('data-canvas-painted',String(painted));",
                    "document.body.setAttribute('data-svg-shapes',String(document.querySelectorAll('svg rect, svg line, svg circle').length));",
                    "var spans=0; document.querySelectorAll('svg rect.nccl-kernel').forEach(function(r){if(r.getBBox().width>0){spans++;}});",
                    "document.body.setAttribute('data-kernel-spans',String(spans));",
                    // Ranks with a drawn (non-empty) bar of each phase, so a test can ask for one bar per rank.
                    "['backward','optimizer'].forEach(function(ph){var rk={};document.querySelectorAll('svg rect.phase-'+ph).forEach(function(r){",
                    "  if(r.getBBox().width>0){rk[r.getAttribute('data-rank')]=1;}});document.body.setAttribute('data-'+ph+'-ranks',String(Object.keys(rk).length));});",
                    "var out=0; document.querySelectorAll('svg text.phase-label').forEach(function(t){var b=t.getBBox(),w=t.ownerSVGElement.viewBox.baseVal.width;",
                    "  if(b.x<0||b.x+b.width>w){out++;}});document.body.setAttribute('data-phase-labels-outside',String(out));",
                    // Pairs of phase labels of one rank drawn over each other, as the browser laid them out.
                    "var over=0; document.querySelectorAll('svg text.phase-label').forEach(function(t){var a=t.getBBox(),k=t.getAttribute('data-rank');",
                    "  document.querySelectorAll('svg text.phase-label[data-rank=\"'+k+'\"]').forEach(function(o){if(o===t){return;}var c=o.getBBox();",
                    "    if(a.x<c.x+c.width-0.5&&c.x<a.x+a.width-0.5&&a.y<c.y+c.height&&c.y<a.y+a.height){over++;}});});",
                    "document.body.setAttribute('data-phase-labels-overlapping',String(over));",
                    "})();"));
}
