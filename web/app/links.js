/**
 * The link tokens this window opens documents through (`?open=ID&link=TOKEN`), by document,
 * kept in `sessionStorage` under `panes.links.<workspace>`: like the window's session, they
 * survive a reload and a restored tab, and a duplicated tab (a fork of this window) or a
 * window opened from it gets a copy. They are sent to the server only with `openDocument`,
 * and never written to the session's restoration state, which the server stores.
 */
export class LinkTokens {
  /** @param {string} workspace */
  constructor(workspace) {
    this.key = `panes.links.${workspace}`;
    /** @type {Map<string, string>} */
    this.tokens = new Map();
    try {
      const kept = JSON.parse(sessionStorage.getItem(this.key) ?? '{}');
      for (const [document, token] of Object.entries(kept)) {
        if (typeof token === 'string') this.tokens.set(document, token);
      }
    } catch {
      /* storage blocked, or not ours: start empty */
    }
  }

  /** @param {string} document */
  get(document) {
    return this.tokens.get(document);
  }

  /**
   * @param {string} document
   * @param {string} token
   */
  set(document, token) {
    this.tokens.set(document, token);
    this.#save();
  }

  /**
   * The link no longer opens the document (revoked, expired): it is not tried again.
   * @param {string} document
   */
  forget(document) {
    if (this.tokens.delete(document)) this.#save();
  }

  #save() {
    try {
      if (this.tokens.size === 0) sessionStorage.removeItem(this.key);
      else sessionStorage.setItem(this.key, JSON.stringify(Object.fromEntries(this.tokens)));
    } catch {
      /* storage blocked: kept for this page only */
    }
  }
}
