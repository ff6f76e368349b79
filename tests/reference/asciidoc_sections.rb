# The AsciiDoc chunker's reference: Asciidoctor's own parser.
#
#   ruby tests/reference/asciidoc_sections.rb FILE...
#
# prints one JSON object, {FILE: {"content": [title, ...], "sections": [title, ...]}}: the
# titles (as Asciidoctor converts them, inline markup rendered as HTML) of each file's sections
# that hold content (a block of their own that is not a section), and of all its sections. The
# document title counts as a section, and as one with content when the document has blocks
# before its first section (its preamble), or blocks and no section at all. Files are parsed,
# never converted; includes resolve as Asciidoctor's safe mode allows, and no attribute is set
# from outside.
require 'asciidoctor'
require 'json'

# Warnings (an unterminated block, a section out of sequence) are the input's, not ours.
Asciidoctor::LoggerManager.logger = Asciidoctor::NullLogger.new

def content?(node)
  node.blocks.any? { |block| block.context != :section }
end

result = {}
ARGV.each do |path|
  doc = Asciidoctor.load_file(path, safe: :safe, parse: true, attributes: {})
  content = []
  sections = []
  # The header is a section to find_by, without blocks: the preamble is the document's.
  if doc.header?
    sections << doc.header.title
    content << doc.header.title if content?(doc)
  end
  doc.find_by(context: :section).each do |section|
    next if section.equal?(doc.header)
    sections << section.title
    content << section.title if content?(section)
  end
  result[path] = { content: content, sections: sections }
end
puts JSON.generate(result)
