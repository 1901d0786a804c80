// DOM APIs newer than the TypeScript that Debian ships (4.8), declared for `tsc --checkJs`
// only; the browser provides them (Chromium, Firefox, Safari since 2024).
interface HTMLElement {
  popover: string | null;
  showPopover(): void;
  hidePopover(): void;
  togglePopover(force?: boolean): boolean;
}
interface ToggleEvent extends Event {
  readonly newState: 'open' | 'closed';
  readonly oldState: 'open' | 'closed';
}
