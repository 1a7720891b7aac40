require 'json'
require 'yaml'
srand(Integer(ARGV[0] || 1))
ALPHA = ["a", "b", "y", "n", "Y", "N", "o", "e", "x", "1", "0", "9", "8", " ", " ", " ", "  ", "\n", "\n", ":", "#", "-", "?", "'", "\"", ".", "_", ",", "[", "]", "{", "}", "&", "*", "!", "|", ">", "%", "@", "`", "\\", "/", "=", "+", "~", "é", "日", "😀", "\t", "\r", "\u2028", "\u0085", "\u00a0", "\x01", "\x7f", "\ufeff", "true", "null", "yes", "no", "0x", "0b", "12", ":30", "2024-01-01", " 12:00:00", ".5", "e+5", "inf", "nan", "<<", "#{'{'}", "\u200d", "\u0301", "\ufffe"]
def rs(max)
  n = rand(max + 1)
  Array.new(n) { ALPHA.sample }.join
end
def longs
  words = Array.new(rand(40) + 10) { 'w' * (rand(12) + 1) + (rand(6) == 0 ? ALPHA.sample : '') }
  sep = [' ', ' ', ' ', '  ', "\n", "\n\n", ' - ', ': ', ' #'].sample
  s = words.join(sep)
  s = ALPHA.sample + s if rand(3) == 0
  s = s + ALPHA.sample if rand(3) == 0
  s = words.map { |w| w + ALPHA.sample }.join(' ') if rand(4) == 0
  s
end
def rv(d)
  case rand(d > 2 ? 6 : 9)
  when 0, 1, 2 then rs(6)
  when 3 then longs
  when 4 then rs(3)
  when 5 then [nil, true, false, rand(-1000..1000), rand * 10**rand(-8..22), rand(-2**63..2**63-1), -0.0, Float::INFINITY, Float::NAN, rand(10**rand(0..17)).to_f / 10**rand(0..4)].sample
  when 6 then Array.new(rand(4)) { rv(d + 1) }
  else Hash[Array.new(rand(4)) { [rand(3) == 0 ? longs : rs(5), rv(d + 1)] }]
  end
end
300.times do
  v = rv(0)
  y = begin; v.to_yaml; rescue => e; "ERR " + e.message.lines.first.chomp; end
  j = begin; v.to_json; rescue => e; "ERR " + e.message; end
  enc = lambda { |x| case x when Float then {"__f" => x.to_s} when Array then x.map(&enc) when Hash then x.transform_values(&enc) else x end }
  puts JSON.generate({"v" => enc.(v), "yaml" => y, "json" => j, "inspect" => v.inspect, "to_s" => v.to_s})
end
