// Shared by the pages: calls to the billing API with errors in words, XMR amounts as
// integers (piconero, BigInt), copy buttons. No dependencies, no build step.
"use strict";

const XG = (() => {
  // Messages for the API's error codes; the API's own message is the fallback (it is
  // written for people too), and a network failure has its own words.
  const WORDS = {
    unknown_tier: "That plan is not offered any more. Reload the page to see the current plans.",
    months_out_of_range: "That number of months is not available for this plan.",
    malformed_json: "The request could not be understood. Reload the page and try again.",
    invoice_not_found: "There is no invoice at this address. Check the link, or start again from the plans.",
    unknown_token: "That token does not belong to any account. Check that you pasted all of it.",
    token_required: "Paste your token first.",
    invoice_open:
      "An earlier renewal invoice is still waiting for its payment. Pay it, or wait until it expires.",
    free_tier_not_renewable: "The free plan cannot be renewed. Choose a paid plan, or get a new free token.",
    rate_unavailable:
      "No current exchange rate is available, so this plan cannot be priced in XMR right now. Try again in a few minutes.",
    rate_limited:
      "Too many invoices or token replacements were asked for from your network recently. Wait a while and try again.",
    free_tier_exhausted:
      "No more free tokens can be given to your network right now. Wait a while, or choose a paid plan.",
    wallet_unavailable: "Payments cannot be received right now. Try again in a few minutes.",
    database_unavailable: "The service is briefly unavailable. Try again in a moment.",
    idempotency_key_reused: "This request was already sent with different details. Reload the page and try again.",
    internal_error: "Something went wrong on our side. Try again in a moment.",
  };

  class ApiError extends Error {
    constructor(message, code, status) {
      super(message);
      this.code = code;
      this.status = status;
    }
  }

  // Server clock minus ours, from the Date header, so countdowns ignore a wrong local clock.
  let clockSkewMs = 0;

  async function api(method, path, { body, headers } = {}) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: Object.assign(body ? { "Content-Type": "application/json" } : {}, headers || {}),
        body: body ? JSON.stringify(body) : undefined,
        cache: "no-store",
      });
    } catch (e) {
      throw new ApiError("The billing server cannot be reached. Check your connection; the page keeps trying.", "network", 0);
    }
    const date = Date.parse(res.headers.get("Date") || "");
    if (!Number.isNaN(date)) clockSkewMs = date - Date.now();
    let data = null;
    try {
      data = await res.json();
    } catch (e) {
      data = null;
    }
    if (!res.ok) {
      const err = (data && data.error) || {};
      let words = WORDS[err.code] || err.message || `The server answered with an unexpected error (HTTP ${res.status}).`;
      if (res.status === 429 && res.headers.get("Retry-After")) {
        words += ` You can try again in ${humanDuration(Number(res.headers.get("Retry-After")) * 1000)}.`;
      }
      throw new ApiError(words, err.code || "http_" + res.status, res.status);
    }
    return data;
  }

  function serverNow() {
    return Date.now() + clockSkewMs;
  }

  const PICO = 1000000000000n;

  // The exact amount: "30787561576" piconero → "0.030787561576" (trailing zeros dropped).
  function xmr(piconero) {
    let p = BigInt(piconero);
    const neg = p < 0n;
    if (neg) p = -p;
    const whole = p / PICO;
    let frac = (p % PICO).toString().padStart(12, "0").replace(/0+$/, "");
    return (neg ? "-" : "") + whole.toString() + (frac ? "." + frac : "");
  }

  // An estimate for reading, not for paying: rounded up to 4 significant digits, and never
  // fewer than the whole XMR ("0.033333333334" → "0.03334", "0.154" → "0.154",
  // "1234.5678" → "1235"). Up, so a quote read here is never less than the invoice's exact
  // amount at the same rate. The invoice shows the exact piconero amount (xmr()).
  const APPROX_DIGITS = 4;
  function xmrApprox(piconero) {
    const p = BigInt(piconero);
    if (p <= 0n) return xmr(p);
    const digits = p.toString().length; // significant digits of the piconero amount
    const dropped = Math.min(12, Math.max(0, digits - APPROX_DIGITS)); // never past the point
    const unit = 10n ** BigInt(dropped);
    return xmr(((p + unit - 1n) / unit) * unit);
  }

  function humanDuration(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 90) return `${s} seconds`;
    const m = Math.round(s / 60);
    if (m < 90) return `${m} minutes`;
    return `${Math.round(m / 60)} hours`;
  }

  function fmtDate(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    return d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function fmtInt(n) {
    return Number(n).toLocaleString("en-US");
  }

  // <button class="copy" data-copy="#selector"> or data-copy-text="…"
  function wireCopyButtons(root) {
    (root || document).querySelectorAll("button.copy").forEach((btn) => {
      if (btn.dataset.wired) return;
      btn.dataset.wired = "1";
      btn.addEventListener("click", async () => {
        const target = btn.dataset.copy ? document.querySelector(btn.dataset.copy) : null;
        const text = btn.dataset.copyText != null ? btn.dataset.copyText : target ? target.textContent.trim() : "";
        const label = btn.dataset.label || btn.textContent;
        btn.dataset.label = label;
        try {
          await copyText(text);
          btn.textContent = "Copied";
        } catch (e) {
          btn.textContent = "Select and copy";
          if (target) selectText(target);
        }
        setTimeout(() => (btn.textContent = label), 1600);
      });
    });
  }

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    const ok = document.execCommand("copy");
    ta.remove();
    if (!ok) throw new Error("copy refused");
  }

  function selectText(el) {
    const r = document.createRange();
    r.selectNodeContents(el);
    const s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  function showError(el, err) {
    el.hidden = false;
    el.className = "notice error";
    el.setAttribute("role", "alert");
    el.textContent = err instanceof Error ? err.message : String(err);
  }

  function hide(el) {
    el.hidden = true;
    el.textContent = "";
  }

  function newKey() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  // The token of a new purchase is answered once, by the POST; the invoice page reads it
  // from this tab's sessionStorage (never from the URL, never from a server log).
  const tokenKey = (id) => "xmrgate.token." + id;
  function keepToken(id, token) {
    try {
      sessionStorage.setItem(tokenKey(id), token);
    } catch (e) {
      /* storage off: the page says the token could not be kept */
    }
  }
  function tokenFor(id) {
    try {
      return sessionStorage.getItem(tokenKey(id));
    } catch (e) {
      return null;
    }
  }

  function el(tag, attrs, ...children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "class") n.className = v;
      else if (k === "text") n.textContent = v;
      else n.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c != null) n.append(c);
    return n;
  }

  return { api, ApiError, xmr, xmrApprox, serverNow, humanDuration, fmtDate, fmtInt, wireCopyButtons, showError, hide, newKey, keepToken, tokenFor, el };
})();
