// The invoice page: amount, address, QR code, countdown, and the live status (polled
// every 2 s) through to the access settings once the plan is active.
"use strict";

(() => {
  const { api, xmr, el, fmtDate, humanDuration, serverNow, showError, hide, tokenFor, keepToken, newKey } = XG;
  const $ = (id) => document.getElementById(id);
  const id = decodeURIComponent(location.pathname.split("/").pop() || "");
  const POLL_MS = 2000;
  const SLOW_POLL_MS = 5000;
  let inv = null;
  let shownQr = null;
  let stopped = false;

  const BADGE = {
    pending: ["Waiting for payment", ""],
    seen: ["Seen in the pool", "warn"],
    confirming: ["Confirming", "warn"],
    paid: ["Paid", "ok"],
    provisioned: ["Active", "ok"],
    underpaid: ["Partly paid", "warn"],
    expired: ["Expired", "bad"],
    late: ["Paid late", "warn"],
    reverted: ["Payment reverted", "bad"],
  };
  const STEP = { pending: 0, underpaid: 0, reverted: 0, expired: 0, seen: 1, late: 1, confirming: 2, paid: 3, provisioned: 4 };

  function confText(i) {
    return `${i.confirmations} of ${i.confirmations_required} confirmations`;
  }

  function statusLine(i) {
    const amt = xmr(i.amount);
    switch (i.status) {
      case "pending":
        return `Send exactly ${amt} XMR to the address below. This page updates by itself; no need to reload.`;
      case "seen":
        return `Your payment is in the transaction pool. Waiting for the first of ${i.confirmations_required} confirmations.`;
      case "confirming":
        return `${confText(i)}. Your plan becomes active at ${i.confirmations_required}.`;
      case "paid":
        return "Payment confirmed. Activating your plan…";
      case "provisioned":
        return i.kind === "renewal"
          ? "Your plan is extended. Your token and settings are unchanged."
          : "Your plan is active. Store your token now.";
      case "underpaid":
        return `Received ${xmr(i.received)} of ${amt} XMR. Send the missing ${xmr(i.remaining)} XMR to the same address; payments add up.`;
      case "expired":
        return "This quote expired before any payment arrived. Do not pay to it any more: get a new quote instead.";
      case "late":
        return i.late_policy === "honoured"
          ? `Your payment arrived after the quote expired, but it covers the locked price, so it is honoured: the plan becomes active after ${i.confirmations_required} confirmations (now ${i.confirmations}).`
          : "Your payment arrived after the quote expired and the grace period. It is recorded and nothing is lost: the operator settles it by hand. Keep this page's address and the transaction id below.";
      case "reverted":
        return "The payment we saw left the pool or the chain (for example after a reorganisation). If it is mined again the invoice continues by itself; otherwise pay again.";
      default:
        return `Status: ${i.status}`;
    }
  }

  function renderStatus(i) {
    const [label, tone] = BADGE[i.status] || [i.status, ""];
    const badge = $("status-badge");
    badge.textContent = i.status === "confirming" ? `${i.confirmations} of ${i.confirmations_required}` : label;
    badge.className = "badge " + tone;
    badge.dataset.status = i.status;
    $("status-line").textContent = statusLine(i);
    const step = STEP[i.status] ?? 0;
    document.querySelectorAll("ol.steps li").forEach((li, n) => {
      li.className = n < step || step === 4 ? "done" : n === step ? "current" : "";
      if (n === 2) li.textContent = i.confirmations_required ? `Confirmations ${Math.min(i.confirmations, i.confirmations_required)}/${i.confirmations_required}` : "Confirmations";
      if (n === step) li.setAttribute("aria-current", "step");
      else li.removeAttribute("aria-current");
    });
    const prog = $("conf-progress");
    const showProg = ["seen", "confirming", "paid", "late"].includes(i.status) && i.confirmations_required > 0;
    prog.hidden = !showProg;
    if (showProg) prog.firstElementChild.style.width = `${Math.min(100, (100 * i.confirmations) / i.confirmations_required)}%`;
    renderExtra(i);
  }

  function renderExtra(i) {
    const box = $("status-extra");
    box.replaceChildren();
    if (i.status === "expired" && !(i.payments || []).length) {
      if (i.kind === "purchase") {
        const b = el("button", { type: "button", id: "new-quote", text: "Get a new quote" });
        b.addEventListener("click", () => newQuote(b));
        box.append(el("p", {}, b));
      } else {
        box.append(el("p", {}, el("a", { class: "button", href: "/renew", text: "Start a new renewal" })));
      }
    }
  }

  async function newQuote(btn) {
    btn.disabled = true;
    hide($("error"));
    try {
      const fresh = await api("POST", "/api/invoices", {
        body: { tier: inv.tier, months: inv.months, channel: "web" },
        headers: { "Idempotency-Key": newKey() },
      });
      if (fresh.token) keepToken(fresh.id, fresh.token);
      location.assign("/invoice/" + encodeURIComponent(fresh.id));
    } catch (e) {
      showError($("error"), e);
      btn.disabled = false;
    }
  }

  function payable(i) {
    return i.address && ["pending", "seen", "underpaid", "reverted"].includes(i.status);
  }

  function renderPay(i) {
    const show = payable(i);
    $("pay-panel").hidden = !show;
    $("qr-panel").hidden = !show;
    $("invoice").classList.toggle("no-qr", !show);
    if (!show) return;
    const remaining = i.remaining_uri ? i.remaining : i.amount;
    $("amount-label").textContent = i.remaining_uri ? "Still to pay (XMR)" : "Amount (XMR)";
    $("amount").textContent = xmr(remaining);
    // the exact amount, as the wallet's "atomic units" (what the API calls piconero)
    $("amount-piconero").textContent = `exactly ${BigInt(remaining).toLocaleString("en-US")} piconero`;
    $("address").textContent = i.address;
    const uri = i.remaining_uri || i.uri;
    $("uri-link").href = uri;
    if (uri !== shownQr) {
      shownQr = uri;
      $("qr").src = `/api/invoices/${encodeURIComponent(i.id)}/qr.svg?for=${encodeURIComponent(remaining)}`;
    }
    $("qr").dataset.uri = uri;
    $("qr-note").textContent = i.remaining_uri ? "It holds the address and the amount still missing." : "It holds the address and the exact amount.";
    $("expiry-line").hidden = !["pending", "underpaid", "reverted"].includes(i.status);
  }

  function renderFacts(i) {
    const f = $("facts");
    const rows = [
      ["Plan", `${i.tier} · ${i.months} month${i.months > 1 ? "s" : ""}`],
      ["Invoice", i.kind === "renewal" ? "renewal" : "new plan"],
    ];
    if (i.price && i.price.currency !== "XMR" && i.price.rate) rows.push(["Rate", `${Number(i.price.rate).toFixed(2)} ${i.price.currency}/XMR`]);
    if (i.price && i.price.currency !== "XMR") rows.push(["Price", `${(i.price.minor_units / 100).toFixed(2)} ${i.price.currency}`]);
    f.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  }

  function renderPayments(i) {
    const list = i.payments || [];
    $("payments-panel").hidden = list.length === 0;
    $("payments").replaceChildren(
      ...list.map((p) =>
        el(
          "tr",
          {},
          el("td", { class: "mono", title: p.txid, "data-txid": p.txid, text: `${p.txid.slice(0, 12)}…${p.txid.slice(-6)}` }),
          el("td", { class: "mono nowrap", text: xmr(p.amount) }),
          el("td", { text: p.state === "pool" ? "in the pool" : String(p.confirmations) }),
        ),
      ),
    );
  }

  function snippet(title, text, note) {
    const pre = el("pre", { class: "cmd" }, text);
    const btn = el("button", { type: "button", class: "copy", "data-copy-text": text, "aria-label": "Copy: " + title, text: "Copy" });
    return el("div", { class: "snippet" }, el("div", { class: "head" }, el("h3", { text: title }), btn), pre, note ? el("p", { class: "small muted mt-s" }, note) : null);
  }

  function renderAccess(i) {
    const box = $("access");
    if (i.status !== "provisioned" || !i.connection) {
      box.hidden = true;
      return;
    }
    if (!box.hidden) return; // rendered once: keeps focus and selections stable
    box.hidden = false;
    const c = i.connection;
    const token = tokenFor(i.id);
    const tok = token || "<your token>";
    const area = $("token-area");
    if (token) {
      area.replaceChildren(
        el("div", { class: "notice warn", role: "note" }, el("strong", { text: "Store this token now." }), el("p", { text: "It is shown only once, on this page in this browser tab, and cannot be recovered. Anyone with it can use your plan." })),
        el(
          "div",
          { class: "token-box" },
          el("label", { id: "token-label", text: "Token" }),
          el("div", { class: "value-row" }, el("div", { class: "value", id: "token", "aria-labelledby": "token-label", text: token }), el("button", { type: "button", class: "copy", "data-copy": "#token", "aria-label": "Copy the token", text: "Copy" })),
        ),
      );
    } else {
      area.replaceChildren(
        el("p", { class: "muted", text: i.kind === "renewal" ? "Use the token you already have; it is unchanged." : "The token was shown once, in the browser tab that created this invoice. The settings below use a placeholder for it." }),
      );
    }
    const base = c.gateway_url.replace(/\/+$/, "");
    const [host, port] = c.daemon_address.split(":");
    const tls = base.startsWith("https:");
    $("access-facts").replaceChildren(
      el("dt", { text: "Valid until" }),
      el("dd", { id: "valid-until", text: fmtDate(i.valid_until) }),
      el("dt", { text: "Node address" }),
      el("dd", { class: "mono", text: c.daemon_address }),
      el("dt", { text: "Username" }),
      el("dd", { class: "mono", id: "username", text: c.username }),
      el("dt", { text: "Password" }),
      el("dd", { text: "your token" }),
    );
    $("settings").replaceChildren(
      el("h3", { text: "Ready-to-paste settings" }),
      snippet("monero-wallet-cli", `monero-wallet-cli --daemon-address ${c.daemon_address} --daemon-login ${c.username}:${tok}${tls ? " --daemon-ssl enabled" : ""}`),
      snippet(
        "monero-wallet-rpc",
        `monero-wallet-rpc --daemon-address ${c.daemon_address} --daemon-login ${c.username}:${tok} --rpc-bind-port 18083 --wallet-dir ./wallets --disable-rpc-login`,
        "Add your own RPC login instead of --disable-rpc-login if the wallet RPC is reachable by others.",
      ),
      snippet(
        "Feather Wallet",
        `Settings → Network → Node → custom node:\n${c.username}:${tok}@${c.daemon_address}`,
        "Feather takes the username and token as user:password in front of the address.",
      ),
      snippet("Cake Wallet", `Settings → Connection and sync → Manage nodes → Add new node\nNode address: ${host}\nPort: ${port || (tls ? "443" : "80")}\nLogin: ${c.username}\nPassword: ${tok}\nUse SSL: ${tls ? "on" : "off"}`),
      snippet("curl (token in the path)", `curl -s ${base}/v1/${tok}/get_height`, "For clients that can only set a URL: every monerod path works under /v1/<token>/."),
      snippet(
        "Agents (XMR402)",
        `${base}/v1/json_rpc`,
        "Agents can skip this page: a request there without a credential answers 402 Payment Required with an invoice in WWW-Authenticate; the agent pays it and retries with Authorization: XMR402 txid=\"…\", proof=\"…\".",
      ),
    );
    XG.wireCopyButtons(box);
  }

  function renderTitle(i) {
    const titles = { provisioned: "Your plan is active", expired: "This quote expired", late: "Payment received late" };
    $("title").textContent = titles[i.status] || (i.kind === "renewal" ? "Renewal invoice" : "Invoice");
    $("subtitle").textContent = `${i.tier.charAt(0).toUpperCase() + i.tier.slice(1)} plan, ${i.months} month${i.months > 1 ? "s" : ""}` + (i.address ? ` · ${xmr(i.amount)} XMR` : "");
  }

  function render(i) {
    $("invoice").hidden = false;
    renderTitle(i);
    renderStatus(i);
    renderPay(i);
    renderFacts(i);
    renderPayments(i);
    renderAccess(i);
    XG.wireCopyButtons();
  }

  function tickCountdown() {
    if (!inv) return;
    const left = Date.parse(inv.expires_at) - serverNow();
    const cd = $("countdown");
    if (left <= 0) {
      cd.textContent = "0:00 — expired";
      return;
    }
    const s = Math.floor(left / 1000);
    const mm = Math.floor(s / 60);
    const ss = String(s % 60).padStart(2, "0");
    cd.textContent = mm >= 60 ? humanDuration(left) : `${mm}:${ss}`;
  }

  async function poll() {
    if (stopped) return;
    let next = POLL_MS;
    try {
      inv = await api("GET", "/api/invoices/" + encodeURIComponent(id));
      hide($("error"));
      render(inv);
      if (inv.status === "provisioned") stopped = true;
      if (inv.status === "expired") next = SLOW_POLL_MS;
    } catch (e) {
      showError($("error"), e);
      if (e.status === 404) {
        stopped = true;
        $("subtitle").textContent = "";
        $("title").textContent = "Invoice not found";
      }
    }
    if (!stopped) setTimeout(poll, next);
  }

  setInterval(tickCountdown, 1000);
  poll().then(tickCountdown);
})();
