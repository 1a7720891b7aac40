# The Ruby half of tests/eyaml-interop/record.sh, run inside the Puppet 8.10 oracle (Ruby 3.3,
# hiera-eyaml 4.2, OpenSSL 3): what Ruby's hiera-eyaml and `openssl smime` encrypt, and what
# they make of the values hiera-lookup encrypted.
#
#   ruby record.rb plaintexts             the corpus's plaintexts, as JSON
#   ruby record.rb theirs KEYDIR          theirs.eyaml: every plaintext encrypted by
#                                         `eyaml encrypt` (string and block output) and by
#                                         `openssl smime -encrypt` with other ciphers
#   ruby record.rb plan                   what record.sh asks hiera-lookup to encrypt
#   ruby record.rb check KEYDIR OURS      ours.decrypted: `eyaml decrypt -e OURS`, verbatim
#   ruby record.rb openssl KEYDIR OURS    ours.openssl: each value of OURS decrypted by
#                                         `openssl smime -decrypt`, with the digest of its
#                                         ciphertext (as hiera-lookup's opaque stand-in)
require 'json'
require 'open3'
require 'base64'
require 'digest'
require 'yaml'
require 'openssl'

PLAIN = {
  'short' => 'hunter2',
  'unicode' => "na\u00efve \u2713 \u00fcn\u00efc\u00f6d\u00e9",
  'multiline' => "line one\nline two\n",
  'long' => ('0123456789abcdef' * 20) + 'end',
  'yamlish' => 'a: b, [c] # not a comment',
}.freeze

CIPHERS = { 'aes128' => 'aes-128-cbc', 'aes192' => 'aes-192-cbc', 'des3' => 'des-ede3-cbc',
            'aes256' => 'aes-256-cbc' }.freeze

def run(*cmd, stdin: nil)
  out, status = Open3.capture2(*cmd, stdin_data: stdin, binmode: true)
  raise "#{cmd.first} failed: #{status}" unless status.success?
  out
end

mode = ARGV.shift
case mode
when 'plaintexts'
  puts JSON.pretty_generate(PLAIN)
when 'theirs'
  keys = ARGV.shift
  pub = File.join(keys, 'public_key.pkcs7.pem')
  puts '# Recorded by tests/eyaml-interop/record.sh: Ruby hiera-eyaml ' \
       "#{Gem.loaded_specs['hiera-eyaml']&.version || '4.2'} (eyaml encrypt) and " \
       "#{OpenSSL::OPENSSL_LIBRARY_VERSION} (openssl smime -encrypt), for fixtures/backends/eyaml/keys."
  puts '---'
  PLAIN.each do |name, plain|
    %w[string block].each do |form|
      out = run('eyaml', 'encrypt', '-o', form, '-l', "eyaml_#{form}_#{name}", '-s', plain,
                '--pkcs7-public-key', pub)
      puts out.chomp
    end
    CIPHERS.each do |short, _|
      der = run('openssl', 'smime', '-encrypt', '-binary', '-outform', 'DER', "-#{short}", pub,
                stdin: plain)
      puts "smime_#{short}_#{name}: ENC[PKCS7,#{Base64.strict_encode64(der)}]"
    end
  end
when 'plan'
  PLAIN.each do |name, plain|
    b64 = Base64.strict_encode64(plain)
    puts ["ours_string_#{name}", 'string', 'aes-256-cbc', b64].join("\t")
    puts ["ours_block_#{name}", 'block', 'aes-256-cbc', b64].join("\t")
    CIPHERS.each do |short, cipher|
      next if short == 'aes256'

      puts ["ours_#{short}_#{name}", 'string', cipher, b64].join("\t")
    end
  end
when 'check'
  keys, ours = ARGV
  print run('eyaml', 'decrypt', '-e', ours,
            '--pkcs7-private-key', File.join(keys, 'private_key.pkcs7.pem'),
            '--pkcs7-public-key', File.join(keys, 'public_key.pkcs7.pem'))
when 'openssl'
  keys, ours = ARGV
  YAML.safe_load(File.read(ours)).each do |label, value|
    cipher = value.gsub(/\s/, '')[/\AENC\[PKCS7,([A-Za-z0-9+\/=]+)\]\z/, 1] or raise "#{label}: no token"
    plain = run('openssl', 'smime', '-decrypt', '-inform', 'DER',
                '-inkey', File.join(keys, 'private_key.pkcs7.pem'),
                stdin: Base64.decode64(cipher))
    puts "#{label} #{Digest::SHA256.hexdigest(cipher)[0, 16]} #{JSON.generate(plain.force_encoding('UTF-8'))}"
  end
else
  abort "usage: ruby record.rb plaintexts|theirs|plan|check|openssl ..."
end
