// BERT's uncased WordPiece tokenizer in the browser: the same tokens as the `tokenizers`
// library's BertNormalizer + BertPreTokenizer + WordPiece (MiniLM's tokenizer.json), so that
// a model run in the page reads what PyTorch reads. tests/test_wordpiece_js.py checks it.
(function (root) {
  "use strict";

  var CONTINUATION = "##", UNK = "[UNK]", MAX_WORD_CHARS = 100;

  function isWhitespace(ch) {
    return ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || /^\p{Zs}$/u.test(ch);
  }

  function isControl(ch) {  // removed by the normalizer (tab and newlines are whitespace)
    if (ch === "\t" || ch === "\n" || ch === "\r") return false;
    return /^[\p{Cc}\p{Cf}\p{Co}\p{Cn}]$/u.test(ch);
  }

  function isChinese(code) {  // the CJK ideograph blocks BERT puts spaces around
    return (code >= 0x4E00 && code <= 0x9FFF) || (code >= 0x3400 && code <= 0x4DBF) ||
      (code >= 0x20000 && code <= 0x2A6DF) || (code >= 0x2A700 && code <= 0x2B73F) ||
      (code >= 0x2B740 && code <= 0x2B81F) || (code >= 0x2B820 && code <= 0x2CEAF) ||
      (code >= 0xF900 && code <= 0xFAFF) || (code >= 0x2F800 && code <= 0x2FA1F);
  }

  function isPunctuation(ch) {  // ASCII symbols count, as in BERT, beside Unicode's P*
    var code = ch.codePointAt(0);
    if ((code >= 33 && code <= 47) || (code >= 58 && code <= 64) ||
        (code >= 91 && code <= 96) || (code >= 123 && code <= 126)) return true;
    return /^\p{P}$/u.test(ch);
  }

  function normalize(text) {
    // Drop control characters (and NUL, U+FFFD), map whitespace to a space, space out
    // Chinese characters, lowercase, and strip accents (decompose, drop combining marks).
    var out = "";
    Array.from(text).forEach(function (ch) {
      var code = ch.codePointAt(0);
      if (code === 0 || code === 0xFFFD || isControl(ch)) return;
      if (isWhitespace(ch)) out += " ";
      else if (isChinese(code)) out += " " + ch + " ";
      else out += ch;
    });
    return out.toLowerCase().normalize("NFD").replace(/\p{Mn}/gu, "");
  }

  function preTokenize(text) {  // split on whitespace, and every punctuation mark alone
    var words = [], current = "";
    Array.from(text).forEach(function (ch) {
      if (ch === " ") {
        if (current) words.push(current);
        current = "";
      } else if (isPunctuation(ch)) {
        if (current) words.push(current);
        words.push(ch);
        current = "";
      } else {
        current += ch;
      }
    });
    if (current) words.push(current);
    return words;
  }

  function wordPieces(word, vocab) {  // greedy longest match first; no match: [UNK]
    var chars = Array.from(word), pieces = [], start = 0;
    if (chars.length > MAX_WORD_CHARS) return [UNK];
    while (start < chars.length) {
      var end = chars.length, piece = null;
      while (end > start) {
        var candidate = (start > 0 ? CONTINUATION : "") + chars.slice(start, end).join("");
        if (vocab.has(candidate)) { piece = candidate; break; }
        end -= 1;
      }
      if (piece === null) return [UNK];
      pieces.push(piece);
      start = end;
    }
    return pieces;
  }

  function WordPiece(vocabText) {
    // vocabText: the contents of vocab.txt, one token per line, the id is the line number.
    this.tokens = vocabText.split("\n").map(function (line) { return line.replace(/\r$/, ""); });
    if (this.tokens[this.tokens.length - 1] === "") this.tokens.pop();
    this.ids = new Map(this.tokens.map(function (token, id) { return [token, id]; }));
  }

  WordPiece.prototype.tokenize = function (text) {  // text -> tokens, no [CLS]/[SEP]
    var ids = this.ids;
    return preTokenize(normalize(text)).reduce(function (tokens, word) {
      return tokens.concat(wordPieces(word, ids));
    }, []);
  };

  WordPiece.prototype.encode = function (textA, textB) {
    // [CLS] A [SEP] (B [SEP]) as ids, segment ids and tokens, as the model takes them.
    var tokens = ["[CLS]"].concat(this.tokenize(textA), ["[SEP]"]);
    var segments = tokens.map(function () { return 0; });
    if (textB !== undefined && textB !== null) {
      var second = this.tokenize(textB).concat(["[SEP]"]);
      tokens = tokens.concat(second);
      segments = segments.concat(second.map(function () { return 1; }));
    }
    var ids = this.ids;
    return {tokens: tokens, segments: segments,
            ids: tokens.map(function (token) { return ids.get(token); })};
  };

  root.MinibertWordPiece = WordPiece;
  if (typeof module !== "undefined" && module.exports) module.exports = WordPiece;
})(typeof window !== "undefined" ? window : globalThis);
