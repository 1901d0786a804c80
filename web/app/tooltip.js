// @ts-check
/**
 * Tooltips for buttons that show only an icon: the button's name and shortcut, from its
 * `data-tooltip`. They show on hover after a short pause (then at once while the pointer moves
 * from button to button, as on a Mac) and on keyboard focus, which the browser's own `title`
 * tooltips never do; touch has neither, so buttons also carry an accessible name.
 *
 * @module app/tooltip
 */
import { byId } from './dom.js';

const DELAY_MS = 350;
/** A tooltip hidden this recently means the person is reading along the toolbar: no pause. */
const WARM_MS = 800;

export function installTooltips() {
  const tip = byId('tooltip');
  /** @type {HTMLElement | null} */
  let shownFor = null;
  /** @type {any} */
  let timer = null;
  let hiddenAt = -Infinity;

  /** @param {HTMLElement} target */
  const show = (target) => {
    clearTimeout(timer);
    if (!target.isConnected || !target.dataset.tooltip) return;
    tip.textContent = target.dataset.tooltip;
    if (!tip.matches(':popover-open')) tip.showPopover();
    shownFor = target;
    const rect = target.getBoundingClientRect();
    const width = tip.offsetWidth;
    tip.style.left = `${Math.round(Math.min(Math.max(8, rect.left + rect.width / 2 - width / 2), window.innerWidth - width - 8))}px`;
    tip.style.top = `${Math.round(rect.bottom + 6)}px`;
  };
  const hide = () => {
    clearTimeout(timer);
    if (!shownFor) return;
    shownFor = null;
    hiddenAt = performance.now();
    if (tip.matches(':popover-open')) tip.hidePopover();
  };
  /** @param {EventTarget | null} target */
  const owner = (target) =>
    target instanceof Element ? /** @type {HTMLElement | null} */ (target.closest('[data-tooltip]')) : null;

  document.addEventListener('pointerover', (event) => {
    const target = owner(event.target);
    if (!target || event.pointerType !== 'mouse' || target === shownFor) return;
    clearTimeout(timer);
    if (performance.now() - hiddenAt < WARM_MS || shownFor) show(target);
    else timer = setTimeout(() => show(target), DELAY_MS);
  });
  document.addEventListener('pointerout', (event) => {
    const target = owner(event.target);
    if (target && !target.contains(/** @type {Node | null} */ (event.relatedTarget))) hide();
  });
  document.addEventListener('focusin', (event) => {
    const target = owner(event.target);
    // In a task of its own: focus moves while a popover is shown or hidden (Escape gives it
    // back to the gear), and no popover can be shown during that.
    if (target) setTimeout(() => {
      if (document.activeElement === target && target.matches(':focus-visible')) show(target);
    });
  });
  document.addEventListener('focusout', hide);
  document.addEventListener('pointerdown', hide, true);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') hide();
  }, true);
  window.addEventListener('blur', hide);
}
