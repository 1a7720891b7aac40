function mfunccode::data() {
  $base = { 'mfunccode::k' => 'base' }
  case $facts['os']['family'] {
    'Debian': { $base + { 'mfunccode::pkg' => 'apt' } }
    default:  { $base }
  }
}
