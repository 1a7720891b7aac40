# The module's defaults, as Puppet 4 modules wrote them.
function mfunc::data() {
  {
    'mfunc::k'       => "mfunc-${facts['os']['family']}",
    'mfunc::release' => $facts['os']['release']['major'],
    'mfunc::cert'    => "${trusted['certname']}/$role/${::fqdn}",
    'mfunc::list'    => [1, 2.5, true, undef, 'x', "y", 0x10, 010],
    'mfunc::escapes' => "tab\there\s\$x\u{e9}\\ 'q' \"dq\"",
    'mfunc::single'  => 'no $interpolation\n here',
    'mfunc::hiera'   => '%{facts.os.family} via hiera',
    'mfunc::nested'  => { 'a' => { 'b' => [] }, 'c' => undef },
    'mfunc::bare'    => present,
    mfunc::barekey   => 'bare key',
    'mfunc::h'       => { 'from_module' => 2, 'shared' => 'module' },
    'mfunc::os'      => "${facts['os']}",
    'lookup_options' => {
      'mfunc::h' => { 'merge' => 'deep' },
    },
  }
}
