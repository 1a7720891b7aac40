function environment::data() {
  {
    'k'   => 'env-fndef',
    'fam' => "${facts['os']['family']}-${trusted['certname']}",
    'top' => "$::role/$role/${::fqdn}",
  }
}
