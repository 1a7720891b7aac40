# Preforking `puppet lookup` server: loads Puppet once, then forks one child per request, which
# runs Puppet::Util::CommandLine exactly as /usr/bin/puppet does, in the request's cwd, with the
# client's stdout/stderr fds (passed over the socket). Replies with the exit status.
# About 3x faster than one Puppet process per query (Puppet's code is loaded once, and with
# FORK_FACTS=1 Facter's host facts are resolved once); every query still gets its own process.
#
#   FORK_FACTS=1 tests/conformance/oracle/puppet8-oracle.sh run ruby tests/conformance/fork/server.rb /tmp/p8fork.sock &
#   PUPPET=tests/conformance/fork/p8fork tests/conformance/record.sh [...]   (P8FORK_SOCK=path)
#
# FORK_PRELOAD=$(paste -sd, tests/conformance/fork/preload.txt) also loads, once, the Puppet files
# (the file type and providers Puppet's settings use, indirector terminuses) every lookup would
# load: about a third less time per query. preload.txt is what a child had added to
# $LOADED_FEATURES after one lookup; the explain and layers suites recorded with it are identical.
# Stop the server by its pid when done. The oracle puts deep_merge 1.2.2 on Ruby's load path
# (DEEP_MERGE=1.1.1 for Debian's own).
require 'socket'
require 'json'
require 'puppet/util/command_line'
require 'puppet/application/lookup'
PRELOAD = (ENV['FORK_PRELOAD'] || '').split(',')
PRELOAD.each { |r| require r }
if ENV['FORK_FACTS'] == '1'
  require 'facter'
  Facter.resolve('')
  $stderr.puts 'facts resolved in the parent'
end
path = ARGV.fetch(0)
File.delete(path) if File.exist?(path)
server = UNIXServer.new(path)
trap('CHLD') { begin; loop { Process.wait(-1, Process::WNOHANG) or break }; rescue Errno::ECHILD; end }
$stderr.puts "fork server ready on #{path} (pid #{Process.pid})"
loop do
  sock = server.accept
  pid = fork do
    server.close
    trap('CHLD', 'DEFAULT')
    outio = sock.recv_io
    errio = sock.recv_io
    req = JSON.parse(sock.gets)
    worker = fork do
      sock.close
      $stdout.reopen(outio)
      $stderr.reopen(errio)
      $stdin.reopen('/dev/null')
      Dir.chdir(req['cwd'])
      $0 = '/usr/bin/puppet'
      ARGV.replace(req['args'])
      begin
        Puppet::Util::CommandLine.new('puppet', req['args']).execute
        code = 0
      rescue SystemExit => e
        code = e.status
      rescue LoadError => e
        $stderr.puts e.message
        code = 1
      rescue Exception => e
        # what ruby would print for an uncaught exception
        $stderr.puts e.full_message(highlight: false)
        code = 1
      end
      $stdout.flush
      $stderr.flush
      exit!(code)
    end
    outio.close
    errio.close
    _, st = Process.wait2(worker)
    code = st.exitstatus || (128 + (st.termsig || 0))
    sock.puts code.to_s
    sock.close
    exit!(0)
  end
  sock.close
end
