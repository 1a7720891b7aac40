Puppet::Functions.create_function(:'mfuncruby::data') do
  def data
    { 'mfuncruby::k' => 'from ruby' }
  end
end
