// The renew page: a token → the tenant's plan, validity and usage today
// (GET /api/tenant with the token as a bearer credential), then a renewal invoice, or a new
// token and login in place of a leaked one (POST /api/tenant/rotate).
"use strict";

(() => {
  const { api, xmr, xmrApprox, fmtDate, fmtInt, showError, hide, newKey, wireCopyButtons } = XG;
  const $ = (id) => document.getElementById(id);
  let tiers = [];
  let token = "";

  $("show-token").addEventListener("change", (e) => ($("token").type = e.target.checked ? "text" : "password"));

  function paidTiers() {
    return tiers.filter((t) => !t.free);
  }

  function fillMonths() {
    const t = tiers.find((x) => x.id === $("renew-tier").value);
    const sel = $("renew-months");
    const keep = Number(sel.value) || 1;
    sel.replaceChildren();
    if (!t) return;
    for (const m of [1, 2, 3, 6, 12, 24].filter((m) => m <= t.max_months)) {
      const o = document.createElement("option");
      o.value = m;
      o.textContent = `${m} month${m > 1 ? "s" : ""}`;
      sel.append(o);
    }
    sel.value = [...sel.options].some((o) => Number(o.value) === keep) ? keep : 1;
    summary();
  }

  function summary() {
    const t = tiers.find((x) => x.id === $("renew-tier").value);
    const m = Number($("renew-months").value);
    if (!t) return;
    const q = t.quote_per_month;
    $("renew-summary").textContent = q
      ? `${t.name}, ${m} month${m > 1 ? "s" : ""}: ` +
        (t.price_per_month.currency === "XMR"
          ? `${xmr(BigInt(q.amount) * BigInt(m))} XMR.`
          : `≈ ${xmrApprox(BigInt(q.amount) * BigInt(m))} XMR at the current rate; the invoice shows the exact amount.`)
      : `${t.name}: no XMR price is available right now.`;
  }

  function showTenant(t) {
    $("tenant").hidden = false;
    $("t-tier").textContent = `${t.tier.name} · ${fmtInt(t.tier.burst_rps)} req/s (${fmtInt(t.tier.burst_size)} at once), ${fmtInt(t.tier.daily_quota)} a day`;
    $("t-handle").textContent = t.handle;
    $("t-valid").textContent = fmtDate(t.valid_until) + (t.active ? "" : " (expired)");
    $("t-valid").dataset.iso = t.valid_until;
    const u = t.usage_today;
    $("t-usage").textContent = `${fmtInt(u.used)} of ${fmtInt(u.quota)} requests`;
    $("t-usage").dataset.used = u.used;
    $("t-usage-bar").style.width = `${Math.min(100, (100 * u.used) / Math.max(1, u.quota))}%`;
    $("t-note").textContent = t.tier.free
      ? "The free plan cannot be renewed: choose a paid plan below to upgrade this token."
      : t.active
        ? "A renewal adds its months after your current end date."
        : "Your plan has ended; a renewal starts from today.";
    const sel = $("renew-tier");
    sel.replaceChildren(
      ...paidTiers().map((x) => {
        const o = document.createElement("option");
        o.value = x.id;
        o.textContent = x.id === t.tier.id ? `${x.name} (current plan)` : `${x.name} — change to this plan`;
        return o;
      }),
    );
    if (paidTiers().some((x) => x.id === t.tier.id)) sel.value = t.tier.id;
    fillMonths();
    $("renew-form").hidden = false;
    $("rotate").hidden = false;
  }

  $("lookup-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    hide($("error"));
    token = $("token").value.trim();
    if (!token) {
      showError($("error"), "Paste your token first.");
      $("token").focus();
      return;
    }
    $("lookup").disabled = true;
    try {
      if (!tiers.length) tiers = (await api("GET", "/api/tiers")).tiers;
      showTenant(await api("GET", "/api/tenant", { headers: { Authorization: "Bearer " + token } }));
    } catch (err) {
      $("tenant").hidden = true;
      $("renew-form").hidden = true;
      $("rotate").hidden = true;
      showError($("error"), err);
    } finally {
      $("lookup").disabled = false;
    }
  });

  $("rotate-btn").addEventListener("click", async () => {
    hide($("error"));
    if (!confirm("Replace your token and username? The old ones stop working at once.")) return;
    $("rotate-btn").disabled = true;
    try {
      const r = await api("POST", "/api/tenant/rotate", { headers: { Authorization: "Bearer " + token } });
      token = r.token;
      $("token").value = r.token;
      $("new-token").textContent = r.token;
      $("new-login").textContent = r.login;
      $("t-handle").textContent = r.handle;
      $("rotated").hidden = false;
      wireCopyButtons($("rotated"));
    } catch (err) {
      showError($("error"), err);
    } finally {
      $("rotate-btn").disabled = false;
    }
  });

  $("renew-tier").addEventListener("change", fillMonths);
  $("renew-months").addEventListener("change", summary);

  $("renew-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    hide($("error"));
    $("renew").disabled = true;
    try {
      const inv = await api("POST", "/api/invoices", {
        body: { tier: $("renew-tier").value, months: Number($("renew-months").value), token, channel: "web" },
        headers: { "Idempotency-Key": newKey() },
      });
      location.assign("/invoice/" + encodeURIComponent(inv.id));
    } catch (err) {
      showError($("error"), err);
      $("renew").disabled = false;
    }
  });
})();
