// Greets a person by name.
export function greet(name) {
  // TODO: an empty name should fall back to "朋友".
  return `你好，${name}！`;
}

// FIXME: the exclamation mark is doubled when the name already ends with one.
export function shout(name) {
  return `${greet(name).toUpperCase()}!`;
}
