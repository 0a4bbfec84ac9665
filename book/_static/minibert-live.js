// The live MiniLM panel: MiniLM (6 layers, 12 heads) runs in the reader's page with
// onnxruntime-web, no server. Every <div class="minibert-live" data-text="..."> of a page
// becomes a text box, a load button, layer and head selectors, the WordPiece tokens, and two
// attention maps of the chosen head: with W_Q, W_K, W_V, and without (q = k = v = the
// layer's input). The big files (runtime, model, vocabulary; built into _static/live/ by
// book/_ext/live_minilm.py) load only when the reader presses the button.
(function () {
  "use strict";
  var STATIC = document.currentScript.src.replace(/[^/]*$/, "");  // .../_static/
  var LAYERS = 6, HEADS = 12, POSITIONS = 512;
  var PARTS = [["minibert-wordpiece.js", "the tokenizer"], ["live/minilm-vocab.js", "the vocabulary"],
               ["live/runtime.js", "onnxruntime-web"], ["live/runtime-wasm.js", "its WebAssembly (14 MB)"],
               ["live/minilm-model.js", "MiniLM (90 MB)"]];
  var loading = null;  // the promise of one runtime, session and tokenizer for every panel

  function loadOnce(progress) {
    if (!loading) {
      loading = loadShared(progress).catch(function (error) { loading = null; throw error; });
    }
    return loading;
  }

  function loadScript(src) {  // classic scripts load from disk too, where fetch() may not
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = STATIC + src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("cannot load " + src + " (was the book built with its live files?)")); };
      document.head.appendChild(script);
    });
  }

  async function bytes(base64) {  // decoded by the browser, not character by character in JS
    var response = await fetch("data:application/octet-stream;base64," + base64);
    return new Uint8Array(await response.arrayBuffer());
  }

  async function loadShared(progress) {
    for (var i = 0; i < PARTS.length; i++) {
      progress(i, "loading " + PARTS[i][1] + " ...");
      await loadScript(PARTS[i][0]);
    }
    progress(PARTS.length, "starting the runtime ...");
    var tokenizer = new window.MinibertWordPiece(window.MINILM_VOCAB);
    var ort = await import("data:text/javascript;base64," + window.ORT_BUNDLE_B64);
    ort.env.wasm.numThreads = 1;  // threads need cross-origin isolation, which a file:// page lacks
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmBinary = await bytes(window.ORT_WASM_B64);
    var session = await ort.InferenceSession.create(await bytes(window.MINILM_B64));
    window.ORT_BUNDLE_B64 = window.ORT_WASM_B64 = window.MINILM_B64 = null;  // free the text
    return {ort: ort, session: session, tokenizer: tokenizer};
  }

  function element(tag, attributes, parent) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (key) { node[key] = attributes[key]; });
    if (parent) parent.appendChild(node);
    return node;
  }

  // The typed text as one sentence or a pair: {parts} to encode, or {problem} to show.
  function parse(text) {
    var parts = text.split(/\[sep\]/i).map(function (part) { return part.trim(); });
    if (!text.trim()) return {problem: "type a sentence: the box is empty"};
    if (parts.length > 2) return {problem: "type one sentence, or two joined by [SEP], not " + parts.length};
    if (parts.some(function (part) { return !part; })) return {problem: "both sides of [SEP] need text"};
    return {parts: parts};
  }

  // One head's (n, n) map from the runtime's (layers, 1, heads, n, n) output, or the mean of
  // all heads when head < 0.
  function headMap(data, n, layer, head) {
    var heads = head < 0 ? HEADS : 1, first = head < 0 ? 0 : head, map = [];
    for (var i = 0; i < n; i++) {
      var row = new Float32Array(n);
      for (var h = first; h < first + heads; h++) {
        var offset = ((layer * HEADS + h) * n + i) * n;
        for (var j = 0; j < n; j++) row[j] += data[offset + j] / heads;
      }
      map.push(row);
    }
    return map;
  }

  var VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];

  function colour(weight) {  // matplotlib's viridis, as the book's figures: 0 purple, 1 yellow
    var t = 4 * Math.max(0, Math.min(1, weight)), k = Math.min(3, Math.floor(t)), f = t - k;
    var rgb = VIRIDIS[k].map(function (low, c) { return Math.round(low + f * (VIRIDIS[k + 1][c] - low)); });
    return "rgb(" + rgb.join(",") + ")";
  }

  // The map on a white canvas: row i is the token that looks, column j the token looked at.
  function paint(canvas, map, tokens, title) {
    var n = map.length, cell = Math.max(3, Math.min(22, Math.floor(380 / n)));
    var labelled = cell >= 9, font = Math.min(12, cell) + "px sans-serif";
    var context = canvas.getContext("2d");
    context.font = font;
    var margin = labelled ? Math.ceil(Math.max.apply(null, tokens.map(function (token) {
      return context.measureText(token).width; }))) + 6 : 4;
    canvas.width = margin + n * cell + 4;
    canvas.height = 20 + margin + n * cell + 4;  // resizing resets the context's settings
    context.fillStyle = "white";
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.fillStyle = "black";
    context.font = "bold 13px sans-serif";
    context.fillText(title, 2, 14);
    var top = 20 + margin;
    map.forEach(function (row, i) {
      row.forEach(function (weight, j) {
        context.fillStyle = colour(weight);
        context.fillRect(margin + j * cell, top + i * cell, cell, cell);
      });
    });
    if (!labelled) return;
    context.fillStyle = "black";
    context.font = font;
    context.textBaseline = "middle";
    context.textAlign = "right";
    tokens.forEach(function (token, i) { context.fillText(token, margin - 3, top + (i + 0.5) * cell); });
    tokens.forEach(function (token, j) {  // column labels, written upwards
      context.save();
      context.translate(margin + (j + 0.5) * cell, top - 3);
      context.rotate(-Math.PI / 2);
      context.textAlign = "left";
      context.fillText(token, 0, 0);
      context.restore();
    });
  }

  function buildPanel(root) {
    root.textContent = "";
    element("p", {textContent: "MiniLM (6 layers, 12 heads, BERT's uncased vocabulary) runs " +
      "here, in your browser, with onnxruntime-web: no server and no network. The button " +
      "loads about 140 MB from the book's own files, once per page."}, root);
    var line = element("div", {className: "minibert-live-line"}, root);
    var text = element("input", {type: "text", value: root.dataset.text || "",
                                 size: 48, className: "minibert-live-text"}, line);
    text.setAttribute("aria-label", "sentence, or two joined by [SEP]");
    var button = element("button", {textContent: "Load MiniLM and run", className: "minibert-live-run"}, line);
    var progress = element("progress", {max: PARTS.length + 1, value: 0}, line);
    var status = element("span", {className: "minibert-live-status", textContent: " not loaded"}, line);
    var choices = element("div", {className: "minibert-live-line"}, root);
    var layerLabel = element("label", {textContent: "layer "}, choices);
    var layer = element("select", {className: "minibert-live-layer"}, layerLabel);
    for (var l = 0; l < LAYERS; l++) layer.add(new Option(String(l), l));
    var headLabel = element("label", {textContent: " head "}, choices);
    var head = element("select", {className: "minibert-live-head"}, headLabel);
    head.add(new Option("average of the 12", -1));
    for (var h = 0; h < HEADS; h++) head.add(new Option(String(h), h));
    var tokens = element("div", {className: "minibert-live-tokens"}, root);
    var maps = element("div", {className: "minibert-live-maps"}, root);
    element("p", {className: "minibert-live-key", textContent: "Each row is a token that attends, " +
      "each column a token it attends to; the colour is the weight, from 0 (purple) to 1 (yellow)."}, root);
    var withCanvas = element("canvas", {className: "minibert-live-with", width: 1, height: 1}, maps);
    var bareCanvas = element("canvas", {className: "minibert-live-bare", width: 1, height: 1}, maps);
    var state = root.minibertLive = {result: null, error: null, runs: 0};

    function say(message, isError) {
      status.textContent = " " + message;
      status.style.color = isError ? "#b00020" : "";
      state.error = isError ? message : null;
    }

    function draw() {
      var result = state.result;
      if (!result) return;
      var l = +layer.value, h = +head.value, which = h < 0 ? "average of the heads" : "head " + h;
      var mine = headMap(result.attentions, result.n, l, h);
      var bare = headMap(result.bare, result.n, l, h);
      var self = function (map) {
        var total = 0;
        map.forEach(function (row, i) { total += row[i]; });
        return Math.round(100 * total / map.length) + "% on self";
      };
      paint(withCanvas, mine, result.tokens, "with W_Q, W_K, W_V (layer " + l + ", " + which + "): " + self(mine));
      paint(bareCanvas, bare, result.tokens, "q = k = v = input: " + self(bare));
    }

    async function run(shared) {
      var typed = parse(text.value);
      if (typed.problem) { say(typed.problem, true); return; }
      var encoded = shared.tokenizer.encode(typed.parts[0], typed.parts[1]), n = encoded.ids.length;
      if (n > POSITIONS) { say(n + " tokens: more than MiniLM's " + POSITIONS + " positions", true); return; }
      var started = performance.now();
      var int64 = function (values) {
        return new shared.ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), [1, n]); };
      var out = await shared.session.run({
        input_ids: int64(encoded.ids), token_type_ids: int64(encoded.segments),
        attention_mask: int64(encoded.ids.map(function () { return 1; }))});
      state.result = {text: text.value, tokens: encoded.tokens, n: n, attentions: out.attentions.data,
                      bare: out.bare_attentions.data, ms: performance.now() - started};
      state.runs += 1;
      tokens.textContent = "WordPiece tokens: " + encoded.tokens.join("  ");
      say("MiniLM ran in " + Math.round(state.result.ms) + " ms; type another sentence and press Enter", false);
      draw();
    }

    async function loadAndRun() {
      button.disabled = true;
      try {
        var shared = await loadOnce(function (done, message) { progress.value = done; say(message, false); });
        progress.value = progress.max;
        button.textContent = "Run";
        await run(shared);
      } catch (error) {
        say("failed: " + error.message, true);
      } finally {
        button.disabled = false;
      }
    }

    button.addEventListener("click", loadAndRun);
    text.addEventListener("keydown", function (event) { if (event.key === "Enter") loadAndRun(); });
    layer.addEventListener("change", draw);
    head.addEventListener("change", draw);
  }

  function start() {
    document.querySelectorAll("div.minibert-live").forEach(buildPanel);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
