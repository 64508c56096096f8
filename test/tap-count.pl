#!/usr/bin/perl
# Runs TAP test files with TAP::Harness and writes "passed failed" (counted in
# assertions; a file that dies or plans wrong counts one failure more) to
# OUTDIR/NAME.count.  Usage: tap-count.pl NAME OUTDIR DBNAME|- FILE...
use strict;
use warnings;
use TAP::Harness;

my ($name, $outdir, $db, @files) = @ARGV;
my %args = (verbosity => 0, lib => ['test/t']);
if ($db ne '-') {
    $args{sources} = { pgTAP => { dbname => $db, suffix => '.sql' } };
}
my $harness = TAP::Harness->new(\%args);
my $agg = $harness->runtests(@files);
my ($passed, $failed) = (0, 0);
for my $f ($agg->descriptions) {
    my ($p) = $agg->parsers($f);
    $passed += scalar($p->passed);
    $failed += scalar($p->failed);
    $failed += 1 if $p->has_problems && !scalar($p->failed);
}
open my $fh, '>', "$outdir/$name.count" or die $!;
print $fh "$passed $failed\n";
close $fh;
exit($failed ? 1 : 0);
