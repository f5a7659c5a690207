// A tiny element builder: h('button', { type: 'button', onclick }, 'Label').
type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') node.addEventListener(key.replace(/^on/, ''), value);
    else if (key === 'class') node.className = String(value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

function append(node: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces `parent`'s children unless `key` equals the key of its last render. */
export function renderKeyed(parent: HTMLElement, key: string, build: () => Child[]): boolean {
  if (parent.dataset['renderKey'] === key) return false;
  parent.dataset['renderKey'] = key;
  // Keep keyboard focus on the element with the same test id, when it survives the re-render.
  const focused = document.activeElement instanceof HTMLElement && parent.contains(document.activeElement)
    ? document.activeElement.dataset['testid']
    : undefined;
  parent.replaceChildren();
  append(parent, build());
  if (focused) parent.querySelector<HTMLElement>(`[data-testid="${CSS.escape(focused)}"]`)?.focus();
  return true;
}

export const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const node = document.getElementById(id);
  if (!node) throw new Error(`page markup lacks #${id}`);
  return node as T;
};
