"""The chat page's style sheet: the cards, notices and banner, the phone layout and the print view.

The reports panel scrolls inside its column on a wide screen; on a phone (one column) it is as long as its cards and
the page scrolls: a panel with a height limit and overflow left visible spilled its cards under the settings column
(issue 52). The print view keeps the answer, its evidence and its reports, and leaves the controls out.
"""

CSS = """
.gradio-container { max-width: 1500px !important; }
.rs-header { display:flex; align-items:baseline; gap:16px; flex-wrap:wrap; padding:4px 2px 0; }
.rs-title { font-size:1.5rem; font-weight:700; color:var(--body-text-color); letter-spacing:-0.01em; }
.rs-subtitle { color:var(--body-text-color-subdued); font-size:0.95rem; flex:1; min-width:240px; }
.rs-backend { font-size:0.8rem; color:var(--body-text-color-subdued); border:1px solid var(--border-color-primary);
  border-radius:999px; padding:2px 10px; }
.rs-banner { background:#fff7e6; border:1px solid #f5c26b; border-left:5px solid #e08a00; color:#5c3d00;
  border-radius:8px; padding:5px 12px; font-size:0.82rem; line-height:1.35; }
.dark .rs-banner { background:#3a2a0a; color:#ffd98a; border-color:#a86b00; }
.rs-notice { border-radius:8px; padding:9px 13px; font-size:0.92rem; line-height:1.4; margin:2px 0; }
/* A notice above the conversation takes at most 104px (it scrolls beyond) and the conversation gives up that room,
   so the input and its buttons stay on screen at the page's top (page_layout.CHAT_HEIGHT less 120px). */
#rs-notice .rs-notice { max-height:104px; overflow-y:auto; }
#rs-chat-col:has(#rs-notice .rs-notice) #rs-chat { height:max(240px, calc(100vh - 540px)) !important; }
.rs-notice ul { margin:0; padding-left:18px; }
.rs-notice-detail { margin-top:4px; font-family:var(--font-mono); font-size:0.85rem; }
.rs-info { background:#eef5ff; border:1px solid #b7d3f7; color:#17406d; }
.rs-warning { background:#fff4e5; border:1px solid #f3c27a; color:#6b4100; }
.rs-error { background:#fdecec; border:1px solid #f2b3b3; color:#7a1a1a; }
.rs-cards { display:flex; flex-direction:column; gap:10px; }
.rs-evidence ol { margin:0.2rem 0 0.8rem 1.2rem; padding:0; }
.rs-evidence li { margin-bottom:0.3rem; }
.rs-evidence .rs-chosen .rs-candidate { font-weight:700; }
.rs-support { color:var(--body-text-color-subdued); font-size:0.85rem; margin-left:0.3rem; }
.rs-links a { font-size:0.8rem; margin-right:0.4rem; }
.rs-cards-head { font-weight:600; color:var(--body-text-color-subdued); font-size:0.85rem;
  text-transform:uppercase; letter-spacing:0.04em; }
.rs-cards-empty { color:var(--body-text-color-subdued); border:1px dashed var(--border-color-primary);
  border-radius:10px; padding:28px 16px; text-align:center; font-size:0.92rem; }
.rs-card { border:1px solid var(--border-color-primary); border-radius:10px; padding:11px 14px;
  background:var(--background-fill-primary); box-shadow:0 1px 2px rgba(0,0,0,0.04); }
.rs-card-top { display:flex; align-items:center; gap:6px; flex-wrap:wrap; font-size:0.82rem; }
.rs-rank { font-weight:700; color:var(--color-accent); }
.rs-id { font-family:var(--font-mono); color:var(--body-text-color); }
.rs-badge { background:var(--background-fill-secondary); border:1px solid var(--border-color-primary);
  border-radius:999px; padding:0 8px; font-size:0.75rem; color:var(--body-text-color-subdued); }
.rs-cited { background:#e7f6ec; border-color:#9fd6b0; color:#1d6b36; }
.rs-contradicts { background:#fdecec; border-color:#e08585; color:#8a1414; font-weight:700; }
.rs-card-contradicts { border-left:5px solid #c62828; }
.rs-contradicts-note { background:#fdecec; border:1px solid #f2b3b3; color:#7a1a1a; border-radius:6px;
  padding:5px 9px; margin:6px 0; font-size:0.85rem; font-weight:600; }
.dark .rs-contradicts-note, .dark .rs-contradicts { background:#4a1515; color:#ffc9c9; border-color:#a33; }
.rs-partly { background:#fff4e0; border-color:#e0b060; color:#7a4a00; font-weight:700; }
.rs-partly-note { background:#fff4e0; border:1px solid #f0d090; color:#6a4000; border-radius:6px;
  padding:5px 9px; margin:6px 0; font-size:0.85rem; font-weight:600; }
.dark .rs-partly-note, .dark .rs-partly { background:#4a3510; color:#ffe2b0; border-color:#a77a20; }
.rs-strength { font-size:0.8rem; font-weight:600; color:var(--body-text-color); }
.rs-score { font-variant-numeric:tabular-nums; }
.rs-match { margin:2px 0 6px; line-height:1.4; }
.rs-match mark { background:#fff3b0; color:inherit; border-radius:3px; padding:0 2px; }
.rs-match mark.rs-negated { background:#fde0e0; color:#8a1414; }
.dark .rs-match mark { background:#5a4a00; } .dark .rs-match mark.rs-negated { background:#4a1515; color:#ffc9c9; }
.rs-full summary, .rs-details summary { cursor:pointer; font-size:0.85rem; color:var(--color-accent); }
.rs-full pre { white-space:pre-wrap; word-break:break-word; font-family:inherit; font-size:0.88rem; margin:6px 0 0;
  max-height:50vh; overflow-y:auto; }
.rs-details { font-size:0.8rem; color:var(--body-text-color-subdued); }
.rs-label { font-size:0.72rem; text-transform:uppercase; letter-spacing:0.05em;
  color:var(--body-text-color-subdued); margin-top:4px; }
.rs-impression { margin:2px 0 6px; font-weight:600; line-height:1.4; white-space:pre-wrap; }
.rs-findings summary { cursor:pointer; font-size:0.85rem; color:var(--color-accent); }
.rs-findings p { margin:6px 0 0; font-size:0.9rem; line-height:1.45; white-space:pre-wrap; }
.rs-muted { color:var(--body-text-color-subdued); font-size:0.82rem; }
#rs-reports { max-height:78vh; overflow-y:auto !important; padding-right:4px; }
.rs-card-target { outline:3px solid var(--color-accent); outline-offset:2px; }
.rs-user { font-size:0.85rem; color:var(--body-text-color-subdued); text-align:right; }
.rs-user a, a.rs-cite { color:var(--color-accent); }
#rs-feedback-note:not(:has(.rs-notice)), #rs-user:not(:has(.rs-user)) { display:none; }
.rs-card, .rs-impression, .rs-findings p, .rs-match { overflow-wrap:anywhere; }
#rs-actions button { white-space:nowrap; }
/* A phone: one column, the conversation and its input first, then the reports, then the settings. */
@media (max-width: 900px) {
  .gradio-container { padding:6px !important; }
  #rs-layout { flex-direction:column; }
  #rs-chat-col { order:-2; } #rs-cards-col { order:-1; }
  .rs-subtitle, .rs-banner-more { display:none; }
  .rs-title { font-size:1.2rem; }
  .rs-header { gap:8px; }
  #rs-reports { max-height:none; overflow:visible !important; padding-right:0; }
}
@media print {
  #rs-settings-col, #rs-input, #rs-actions, #rs-feedback, #rs-feedback-note, #rs-user, #rs-examples, footer,
  #rs-chat .message-buttons, #rs-chat .icon-button-wrapper, .rs-banner-more { display:none !important; }
  #rs-layout { display:block !important; }
  #rs-chat, #rs-chat .bubble-wrap, #rs-reports { height:auto !important; max-height:none !important;
    overflow:visible !important; }
  .rs-card { break-inside:avoid; box-shadow:none; }
}
#rs-notice:not(:has(.rs-notice)) { display:none; }
"""
