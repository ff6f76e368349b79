// The MDX project's own reading of .mdx files, for tests/chunking/test_reference_mdx.py.
//
// Usage: node tests/reference/mdx_sections.mjs FILE...
// Prints one JSON object: {"FILE": {"titles": [...], "esm": [[first, last], ...]}, ...}, or
// {"FILE": {"error": "..."}} for a file the parser rejects (the test lists those, never drops
// them).
//
// - titles: the text of every heading (any depth, inside JSX elements too) whose section holds
//   content: a node between it and the next heading, in document order, that a reader sees: a
//   paragraph with text, a list item's paragraph, code, a table, a definition, a thematic break,
//   a JSX element with a string attribute. Imports and exports (mdxjsEsm), {expressions} and
//   front matter are not content, nor is a JSX element without text of its own (its children
//   count on their own, where they are). A heading's text is the values of its text and
//   inlineCode descendants, as mdast-util-to-string gives them without expressions (a hard
//   line break is a space).
// - esm: the 1-based first and last line of every mdxjsEsm node.

import fs from 'node:fs'
import remarkFrontmatter from 'remark-frontmatter'
import remarkMdx from 'remark-mdx'
import remarkParse from 'remark-parse'
import {unified} from 'unified'

const processor = unified()
  .use(remarkParse)
  .use(remarkMdx)
  .use(remarkFrontmatter, ['yaml', 'toml'])

// Nodes that are never content: code for the page, or data about it.
const NOT_CONTENT = new Set([
  'mdxjsEsm',
  'mdxFlowExpression',
  'mdxTextExpression',
  'yaml',
  'toml'
])
// Nodes that hold blocks: what they hold counts, where it is.
const CONTAINERS = new Set([
  'root',
  'blockquote',
  'list',
  'listItem',
  'footnoteDefinition'
])

function text(node) {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value
  if (node.type === 'break') return ' ' // a hard line break parts two words
  if (NOT_CONTENT.has(node.type)) return ''
  return (node.children || []).map(text).join('')
}

function hasStringAttribute(node) {
  return (node.attributes || []).some(
    (a) =>
      a.type === 'mdxJsxAttribute' &&
      typeof a.value === 'string' &&
      a.value.trim() !== ''
  )
}

// Whether a phrasing node shows text: its text, or a JSX element's string attribute.
function showsText(node) {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value.trim() !== ''
  if (NOT_CONTENT.has(node.type)) return false
  if (node.type === 'mdxJsxTextElement' && hasStringAttribute(node)) return true
  if (node.type === 'image' && node.alt) return true
  return (node.children || []).some(showsText)
}

function sections(tree) {
  const titles = []
  const esm = []
  let current = null // {title, content}
  const close = () => {
    if (current && current.content) titles.push(current.title)
  }
  const visit = (node) => {
    if (node.type === 'mdxjsEsm') {
      esm.push([node.position.start.line, node.position.end.line])
      return
    }
    if (NOT_CONTENT.has(node.type)) return
    if (node.type === 'heading') {
      close()
      current = {title: text(node), content: false}
      return
    }
    if (CONTAINERS.has(node.type)) {
      for (const child of node.children || []) visit(child)
      return
    }
    if (node.type === 'mdxJsxFlowElement') {
      if (current && hasStringAttribute(node)) current.content = true
      for (const child of node.children || []) visit(child)
      return
    }
    if (node.type === 'paragraph') {
      if (current && showsText(node)) current.content = true
      return
    }
    // code, table, definition, thematicBreak, html, math...: a block a reader sees.
    if (current) current.content = true
  }
  visit(tree)
  close()
  return {titles, esm}
}

const out = {}
for (const file of process.argv.slice(2)) {
  try {
    out[file] = sections(processor.parse(fs.readFileSync(file, 'utf8')))
  } catch (error) {
    out[file] = {error: String(error && error.message ? error.message : error)}
  }
}
process.stdout.write(JSON.stringify(out) + '\n')
