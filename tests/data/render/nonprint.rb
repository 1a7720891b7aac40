# Prints the non-printable code point ranges of this Ruby's String#inspect (src/render/nonprint.rs):
#   ruby tests/data/render/nonprint.rb
ranges = []
start = nil
prev = nil
(0..0x10FFFF).each do |cp|
  next if (0xD800..0xDFFF).cover?(cp)
  s = cp.chr("UTF-8")
  ins = s.inspect
  np = ins.start_with?('"\\') && !['"\\""', '"\\\\"', '"\\#"'].include?(ins) && ins != "\"\\e\"" ? true : (ins =~ /\A"\\[ux]/ ? true : false)
  np = true if ins != "\"#{s}\"" && !['"\\""', '"\\\\"'].include?(ins)
  if np
    if start && prev == cp - 1 then prev = cp else ranges << [start, prev] if start; start = cp; prev = cp end
  end
end
ranges << [start, prev] if start
puts ranges.size
puts ranges.map { |a, b| format("(0x%X, 0x%X)", a, b) }.join(", ")
