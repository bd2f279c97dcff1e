// The plans page: tiers side by side, a choice of months, and "buy" → an invoice.
"use strict";

(() => {
  const { api, xmr, xmrApprox, el, fmtInt, showError, hide, keepToken, newKey } = XG;
  const tiersEl = document.getElementById("tiers");
  const monthsEl = document.getElementById("months");
  const errorEl = document.getElementById("error");
  const rateNote = document.getElementById("rate-note");
  let tiers = [];

  function fiat(t) {
    const p = t.price_per_month;
    if (p.currency === "XMR") return null;
    const sym = { USD: "$", EUR: "€", GBP: "£" }[p.currency];
    return sym ? sym + p.amount : `${p.amount} ${p.currency}`;
  }

  // A tier priced in XMR costs exactly its price; one priced in fiat costs what the rate
  // says when the invoice is made, so its XMR amount here is an estimate (xmrApprox).
  function totalXmr(priceFiat, piconero) {
    return priceFiat ? `≈ ${xmrApprox(piconero)} XMR` : `${xmr(piconero)} XMR`;
  }

  function monthsFor(t) {
    return Math.min(Number(monthsEl.value), t.max_months);
  }

  function card(t) {
    const months = monthsFor(t);
    const quote = t.quote_per_month;
    const priceFiat = fiat(t);
    let price, xmrLine, total;
    if (t.free) {
      price = el("div", { class: "price" }, "Free");
      xmrLine = el("div", { class: "xmr plain" }, "No payment, no invoice");
      total = el("div", { class: "total muted" }, "Active at once, rate-limited per network.");
    } else {
      price = priceFiat
        ? el("div", { class: "price" }, priceFiat, el("small", { text: " / month" }))
        : el("div", { class: "price" }, xmr(quote.amount) + " XMR", el("small", { text: " / month" }));
      xmrLine = el("div", { class: "xmr" }, priceFiat ? (quote ? `≈ ${xmrApprox(quote.amount)} XMR / month` : "XMR price unavailable") : "");
      total = el(
        "div",
        { class: "total muted" },
        `Total for ${months} month${months > 1 ? "s" : ""}`,
        el("span", { class: "mono", "data-total": t.id }, quote ? totalXmr(priceFiat, BigInt(quote.amount) * BigInt(months)) : "—"),
      );
    }
    const facts = el(
      "ul",
      { class: "facts" },
      el("li", {}, el("strong", { text: fmtInt(t.burst_rps) }), " requests/s, ", el("strong", { text: fmtInt(t.burst_size) }), " at once"),
      el("li", {}, el("strong", { text: fmtInt(t.daily_quota) }), " requests a day"),
      t.free
        ? el("li", {}, "Active ", el("strong", { text: "at once" }))
        : el("li", {}, "Active after ", el("strong", { text: String(t.confirmations) }), ` confirmation${t.confirmations === 1 ? "" : "s"}`),
    );
    const label = t.free ? `Get a free token` : `Buy ${t.name} for ${months} month${months > 1 ? "s" : ""}`;
    const btn = el("button", { type: "button", "data-tier": t.id, text: label });
    btn.addEventListener("click", () => buy(t, btn));
    return el(
      "article",
      { class: "panel tier" + (t.id === "merchant" ? " featured" : ""), "aria-labelledby": "tier-" + t.id },
      el("h2", { id: "tier-" + t.id, text: t.name }),
      price,
      xmrLine,
      facts,
      total,
      btn,
    );
  }

  function render() {
    tiersEl.replaceChildren(...tiers.map(card));
    tiersEl.setAttribute("aria-busy", "false");
    const anyFiat = tiers.some((t) => !t.free && t.price_per_month.currency !== "XMR");
    const anyQuote = tiers.some((t) => !t.free && t.quote_per_month);
    rateNote.textContent = anyFiat
      ? anyQuote
        ? "XMR amounts at the current exchange rate."
        : "No current exchange rate: fiat-priced plans cannot be bought right now."
      : "";
  }

  async function buy(t, btn) {
    hide(errorEl);
    const buttons = tiersEl.querySelectorAll("button");
    buttons.forEach((b) => (b.disabled = true));
    const old = btn.textContent;
    btn.textContent = t.free ? "Creating your token…" : "Creating the invoice…";
    try {
      const inv = await api("POST", "/api/invoices", {
        body: { tier: t.id, months: monthsFor(t), channel: "web" },
        headers: { "Idempotency-Key": newKey() },
      });
      if (inv.token) keepToken(inv.id, inv.token);
      location.assign("/invoice/" + encodeURIComponent(inv.id));
    } catch (e) {
      showError(errorEl, e);
      errorEl.focus && errorEl.scrollIntoView({ block: "nearest" });
      btn.textContent = old;
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  async function load() {
    try {
      const data = await api("GET", "/api/tiers");
      tiers = data.tiers;
      render();
    } catch (e) {
      tiersEl.replaceChildren();
      showError(errorEl, e);
    }
  }

  monthsEl.addEventListener("change", render);
  load();
})();
