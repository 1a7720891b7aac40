# Generates corpus.jsonl: random merge-driver runs through Puppet's own MergeStrategy classes,
# dumped by Psych, so the anchors show which objects the result shares with the found values.
#   ruby tests/data/merge/gen.rb > tests/data/merge/corpus.jsonl
require 'puppet'
require 'json'

srand(20261122)
KEYS = %w[a b c]
STRS = ['x', 'y', '--x', '--', 'z']

def rand_value(depth)
  r = rand(10)
  if depth >= 3 || r < 3
    case rand(6)
    when 0 then STRS.sample.dup
    when 1 then rand(3)
    when 2 then nil
    else STRS.sample.dup
    end
  elsif r < 6
    Array.new(rand(4)) { rand(3) == 0 ? rand_hash(depth + 1) : rand_value(depth + 1) }
  else
    rand_hash(depth + 1)
  end
end

def rand_hash(depth)
  h = {}
  KEYS.sample(rand(4)).each { |k| h[k] = rand_value(depth) }
  h
end

STRATEGIES = [
  { 'strategy' => 'deep' },
  { 'strategy' => 'deep', 'knockout_prefix' => '--' },
  { 'strategy' => 'deep', 'merge_hash_arrays' => true },
  { 'strategy' => 'deep', 'knockout_prefix' => '--', 'merge_hash_arrays' => true },
  { 'strategy' => 'deep', 'sort_merged_arrays' => true },
  'hash',
  'unique',
]

n = 0
while n < 1500
  strat = STRATEGIES.sample
  vals = Array.new(2 + rand(2)) { rand(4) == 0 ? rand_value(1) : rand_hash(0) }
  inputs = vals.map(&:inspect)
  s = Puppet::Pops::MergeStrategy.strategy(strat)
  begin
    memo = nil
    vals.each_with_index do |v, i|
      memo = i == 0 ? s.send(:convert_value, v) : s.merge(memo, v)
    end
  rescue StandardError, Puppet::Error
    next
  end
  puts JSON.generate({ 'strategy' => strat.inspect, 'values' => inputs, 'yaml' => Psych.dump([memo] + vals) })
  n += 1
end
